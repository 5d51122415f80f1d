package server

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/hookd/hookd"
	"github.com/hookd/hookd/signature"
)

// want422 checks that resp is Svix's 422 naming field in the body.
func want422(t *testing.T, resp *http.Response, field string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("%s %s: status %d, want 422; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, body)
	}
	var v struct {
		Detail []struct {
			Loc []string `json:"loc"`
			Msg string   `json:"msg"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Detail) == 0 {
		t.Fatalf("422 body %s: %v", body, err)
	}
	if loc := v.Detail[0].Loc; len(loc) != 2 || loc[0] != "body" || loc[1] != field || v.Detail[0].Msg == "" {
		t.Fatalf("loc %v (%s), want [body %s]", loc, v.Detail[0].Msg, field)
	}
}

// TestEndpointScheme sets the signing scheme through the API: on create, PUT and PATCH, shown to
// today's clients and not to 1.44's, checked against the secret.
func TestEndpointScheme(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "acme")
	const list = "/api/v1/app/acme/endpoint"
	url := b.recv.URL("/stripe")

	ep := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`","uid":"s","scheme":"stripe"}`), http.StatusCreated)
	if ep["scheme"] != "stripe" {
		t.Fatalf("created: scheme %v, want stripe", ep["scheme"])
	}
	if got, _ := b.client.GetEndpoint(b.ctx, "acme", "s"); got.Scheme != hookd.SchemeStripe {
		t.Fatalf("stored scheme %q, want stripe", got.Scheme)
	}
	if got := epReadJSON(t, b.do(t, "GET", list+"/s", ""), http.StatusOK); got["scheme"] != "stripe" {
		t.Errorf("get: scheme %v", got["scheme"])
	}
	// 1.44's shape has exactly its fields: no scheme.
	if got := epReadJSON(t, b.do(t, "GET", list+"/s", "", "X-Hookd-Api-Generation", "1.44"), http.StatusOK); got["scheme"] != nil {
		t.Errorf("1.44 shape carries scheme %v", got["scheme"])
	}
	plain := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`","uid":"p"}`), http.StatusCreated)
	if plain["scheme"] != "standard" {
		t.Errorf("default scheme %v, want standard", plain["scheme"])
	}

	// A PUT without scheme keeps it, as hookd's other settings stay; with it, it changes.
	if got := epReadJSON(t, b.do(t, "PUT", list+"/s", `{"url":"`+url+`","uid":"s","description":"d"}`), http.StatusOK); got["scheme"] != "stripe" {
		t.Errorf("PUT without scheme: %v, want stripe kept", got["scheme"])
	}
	if got := epReadJSON(t, b.do(t, "PUT", list+"/s", `{"url":"`+url+`","uid":"s","scheme":"envelope"}`), http.StatusOK); got["scheme"] != "envelope" {
		t.Errorf("PUT envelope: %v", got["scheme"])
	}
	if got := epReadJSON(t, b.do(t, "PATCH", list+"/s", `{"scheme":"stripe"}`), http.StatusOK); got["scheme"] != "stripe" {
		t.Errorf("PATCH stripe: %v", got["scheme"])
	}
	if got := epReadJSON(t, b.do(t, "PATCH", list+"/s", `{"description":"x"}`), http.StatusOK); got["scheme"] != "stripe" {
		t.Errorf("PATCH without scheme: %v, want stripe kept", got["scheme"])
	}
	if got := epReadJSON(t, b.do(t, "PATCH", list+"/s", `{"scheme":null}`), http.StatusOK); got["scheme"] != "standard" {
		t.Errorf("PATCH null: %v, want standard", got["scheme"])
	}

	// Bad values are 422s naming scheme, and nothing is stored.
	want422(t, b.do(t, "POST", list, `{"url":"`+url+`","scheme":"carrier-pigeon"}`), "scheme")
	want422(t, b.do(t, "POST", list, `{"url":"`+url+`","scheme":5}`), "scheme")
	want422(t, b.do(t, "PUT", list+"/p", `{"url":"`+url+`","uid":"p","scheme":"STRIPE"}`), "scheme")
	want422(t, b.do(t, "PATCH", list+"/p", `{"scheme":"hmac"}`), "scheme")
	eps, err := b.client.ListEndpoints(b.ctx, "acme", hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.Data) != 2 {
		t.Errorf("%d endpoints, want 2", len(eps.Data))
	}
	if got, _ := b.client.GetEndpoint(b.ctx, "acme", "p"); got.Scheme != hookd.SchemeStandard {
		t.Errorf("scheme of p after refused changes: %q", got.Scheme)
	}

	// The secret must suit the scheme: a whsk_ key cannot sign an HMAC scheme, plain text cannot
	// sign Standard Webhooks. A PATCH that changes both checks the secret against the new scheme.
	edSecret, _, err := signature.NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	b.log.Secret(edSecret)
	want422(t, b.do(t, "POST", list, `{"url":"`+url+`","scheme":"stripe","secret":"`+edSecret+`"}`), "secret")
	const plainSecret = "a Stripe-style secret of plain text"
	b.log.Secret(plainSecret)
	if got := epReadJSON(t, b.do(t, "PATCH", list+"/p", `{"scheme":"stripe","secret":"`+plainSecret+`"}`), http.StatusOK); got["scheme"] != "stripe" {
		t.Errorf("PATCH scheme and secret: %v", got["scheme"])
	}
	if key, _ := b.client.EndpointSecret(b.ctx, "acme", "p"); key != plainSecret {
		t.Errorf("secret after PATCH: not the one given")
	}
	want422(t, b.do(t, "PATCH", list+"/p", `{"scheme":"standard"}`), "scheme")
	want422(t, b.do(t, "PUT", list+"/p", `{"url":"`+url+`","uid":"p","scheme":"standard"}`), "scheme")

	// A delivery to the Stripe-shaped endpoint carries Stripe-Signature, which verifies with the
	// secret the API gives, read from that header alone.
	b.recv.Handle("/stripe", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	secret := epReadJSON(t, b.do(t, "GET", list+"/s/secret", ""), http.StatusOK)["key"].(string)
	b.log.Secret(secret)
	if _, err := b.client.EditEndpoint(b.ctx, "acme", "p", func(in *hookd.EndpointIn) error { in.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	epReadJSON(t, b.do(t, "PATCH", list+"/s", `{"scheme":"stripe"}`), http.StatusOK)
	epReadJSON(t, b.do(t, "POST", "/api/v1/app/acme/msg", `{"eventType":"invoice.paid","payload":{"n":1}}`), http.StatusAccepted)
	reqs, err := b.recv.Wait(b.ctx, "/stripe", 1)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.NewStripeVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(reqs[0].Body, http.Header{"Stripe-Signature": reqs[0].Header.Values("Stripe-Signature")}); err != nil {
		t.Errorf("Stripe-Signature: %v (headers %v)", err, reqs[0].Header)
	}
}
