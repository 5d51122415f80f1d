package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/server"
)

// schemaCells returns every value of every row of every table in the bundle's schema, as text
// (bytea as its bytes, not its hex form).
func schemaCells(t *testing.T, b *bundle) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, inSchema(t, b.url, b.schema))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`, b.schema)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables of %s: %v, %v", b.schema, tables, err)
	}
	var cells []string
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT * FROM `+pgx.Identifier{table}.Sanitize())
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case []byte:
					cells = append(cells, string(v))
				case nil:
				default:
					j, _ := json.Marshal(v) // jsonb arrives decoded
					cells = append(cells, fmt.Sprint(v), string(j))
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return cells
}

// holds reports whether any cell contains s.
func holds(cells []string, s string) bool {
	for _, c := range cells {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

// With a main key, neither the app-portal token kept for an Idempotency-Key's replay nor an
// endpoint's sensitive header value is stored in clear in any table; both read back.
func TestMainKeySealsAtRest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const mainKey = "qLq0Yt9oq3F9Jm0C7ydJ7Vn0r3KgZfN7Vq1L3yS5Q0A="
	const admin, auth = "hookd_sk_admin-for-sealing", "Bearer hdr-Vq8Lm3Zt6Wp"
	client, err := hookd.NewClient(b.store, &hookd.Config{MainKey: mainKey, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ta, _, err := server.NewTokenAuth(ctx, b.store, admin, nil)
	if err != nil {
		t.Fatal(err)
	}
	api, err := server.New(client, &server.Config{Auth: ta, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	do := func(method, path, body string, status int, header ...string) (map[string]any, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, status)
		}
		var out map[string]any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatalf("%s %s: %s: %v", method, path, raw, err)
			}
		}
		return out, resp.Header
	}

	do("POST", "/api/v1/app", `{"name":"Acme","uid":"acme"}`, http.StatusCreated)
	key := []string{"Idempotency-Key", "portal-1"}
	first, _ := do("POST", "/api/v1/auth/app-portal-access/acme", `{}`, http.StatusOK, key...)
	token, _ := first["token"].(string)
	ep, _ := do("POST", "/api/v1/app/acme/endpoint", `{"url":"https://example.com/h","headers":{"Authorization":"`+auth+`","X-Tenant":"tenant-Pz4"}}`,
		http.StatusCreated, "Idempotency-Key", "endpoint-1")

	cells := schemaCells(t, b)
	for _, secret := range []string{token, auth, "hdr-Vq8Lm3Zt6Wp"} {
		if secret == "" || holds(cells, secret) {
			t.Fatalf("a table holds %q in clear", secret)
		}
	}
	if !holds(cells, "tenant-Pz4") {
		t.Fatal("no table holds the plain header: the scan reads nothing")
	}

	again, h := do("POST", "/api/v1/auth/app-portal-access/acme", `{}`, http.StatusOK, key...)
	if again["token"] != token || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay %v %v, want the token of %v", again, h, first)
	}
	got, err := client.GetEndpoint(ctx, "acme", ep["id"].(string))
	if err != nil || got.Headers["Authorization"] != auth || got.Headers["X-Tenant"] != "tenant-Pz4" {
		t.Fatalf("GetEndpoint: %v, %v", got, err)
	}
	headers, _ := do("GET", "/api/v1/app/acme/endpoint/"+ep["id"].(string)+"/headers", "", http.StatusOK)
	if fmt.Sprint(headers["sensitive"]) != "[Authorization]" {
		t.Fatalf("headers %v: want Authorization listed as sensitive", headers)
	}
}
