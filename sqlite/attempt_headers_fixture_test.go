package sqlite_test

import (
	"compress/gzip"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/sqlite"
)

// The attempts that earlier builds recorded, their headers kept as JSON, read back the same
// after this build opens (and migrates) their databases: the upgrade fixtures' files.
func TestFixtureAttemptHeadersReadBack(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../testdata/upgrade/sqlite/*/hookd.db.gz")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	checked := 0
	for _, gz := range dirs {
		path := filepath.Join(t.TempDir(), "hookd.db")
		gunzipTo(t, gz, path)
		recorded := recordedHeaders(t, path)
		if recorded == nil {
			continue // written before attempts kept headers
		}
		ctx := context.Background()
		s, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatalf("%s: %v", gz, err)
		}
		for id, raw := range recorded {
			want := hookd.Attempt{}
			if want.RequestHeaders, err = hookd.DecodeAttemptHeaders(raw[0]); err != nil {
				t.Fatal(err)
			}
			if want.ResponseHeaders, err = hookd.DecodeAttemptHeaders(raw[1]); err != nil {
				t.Fatal(err)
			}
			got, err := s.GetAttempt(ctx, id)
			if err != nil {
				t.Fatalf("%s: attempt %s: %v", gz, id, err)
			}
			if !reflect.DeepEqual(got.RequestHeaders, want.RequestHeaders) || !reflect.DeepEqual(got.ResponseHeaders, want.ResponseHeaders) {
				t.Errorf("%s: attempt %s reads back\n%v\n%v\nwant\n%v\n%v", gz, id, got.RequestHeaders, got.ResponseHeaders,
					want.RequestHeaders, want.ResponseHeaders)
			}
			if len(want.RequestHeaders.Header) > 0 {
				checked++
			}
		}
		s.Close()
	}
	if checked == 0 {
		t.Fatal("no fixture holds an attempt with request headers")
	}
	t.Logf("%d attempts with request headers read back", checked)
}

func gunzipTo(t *testing.T, gz, path string) {
	t.Helper()
	in, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordedHeaders returns the header columns of each attempt of the database at path as the
// build that wrote it kept them, or nil when its attempts have no such columns.
func recordedHeaders(t *testing.T, path string) map[string][2]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('hookd_attempts') WHERE name = 'request_headers'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return nil
	}
	rows, err := db.Query(`SELECT id, request_headers, response_headers FROM hookd_attempts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]string{}
	for rows.Next() {
		var id, req, resp string
		if err := rows.Scan(&id, &req, &resp); err != nil {
			t.Fatal(err)
		}
		out[id] = [2]string{req, resp}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
