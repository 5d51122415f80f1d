package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// api calls one server of the build with a token.
type api struct {
	base  string
	token string
	hc    *http.Client
}

func newAPI(base, token string) *api {
	return &api{base: base, token: token, hc: &http.Client{Timeout: 30 * time.Second}}
}

// do sends body (nil: none) as JSON and returns the status and the body.
func (a *api) do(ctx context.Context, method, path string, body any) (int, json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp.StatusCode, b, nil
}

// must is do that fails unless the status is one of want.
func (a *api) must(ctx context.Context, method, path string, body any, want ...int) (json.RawMessage, error) {
	code, b, err := a.do(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	for _, w := range want {
		if code == w {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s %s: status %d, want %v: %s", method, path, code, want, b)
}

// get reads path, which must answer 200.
func (a *api) get(ctx context.Context, path string) (json.RawMessage, error) {
	return a.must(ctx, http.MethodGet, path, nil, http.StatusOK)
}

// list reads every page of a list path.
func (a *api) list(ctx context.Context, path string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	iterator := ""
	for range 100 {
		q := url.Values{"limit": {"250"}}
		if iterator != "" {
			q.Set("iterator", iterator)
		}
		b, err := a.get(ctx, path+"?"+q.Encode())
		if err != nil {
			return nil, err
		}
		var page struct {
			Data     []json.RawMessage `json:"data"`
			Iterator *string           `json:"iterator"`
			Done     bool              `json:"done"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, fmt.Errorf("GET %s: %w in %s", path, err, b)
		}
		all = append(all, page.Data...)
		if page.Done || page.Iterator == nil || *page.Iterator == "" || len(page.Data) == 0 {
			return all, nil
		}
		iterator = *page.Iterator
	}
	return nil, fmt.Errorf("GET %s: more than 100 pages", path)
}

// field reads one top-level field of a JSON object; nil when absent.
func field(raw json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m[name]
}

// str reads a string field; "" when absent or not a string.
func str(raw json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(field(raw, name), &s)
	return s
}

// sameJSON reports whether a and b encode the same value.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}
