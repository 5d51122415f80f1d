package server

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestEndpointRetryPolicy sets an endpoint's retry policy through the API: on create, PUT (absent
// stays) and PATCH (null inherits), shown to today's clients and not to 1.44's. The harness's
// server schedule is 50 ms, 100 ms; its timeout bound is the default 30 s.
func TestEndpointRetryPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "acme")
	const list = "/api/v1/app/acme/endpoint"
	url := b.recv.URL("/p")

	ep := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`","uid":"p","retrySchedule":[0.05,0.01],"timeoutSeconds":1.5}`), http.StatusCreated)
	if !reflect.DeepEqual(ep["retrySchedule"], []any{0.05, 0.01}) || ep["timeoutSeconds"] != 1.5 {
		t.Fatalf("created: retrySchedule %v, timeoutSeconds %v", ep["retrySchedule"], ep["timeoutSeconds"])
	}
	got, err := b.client.GetEndpoint(b.ctx, "acme", "p")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.RetrySchedule, []time.Duration{50 * time.Millisecond, 10 * time.Millisecond}) || got.AttemptTimeout != 1500*time.Millisecond {
		t.Fatalf("stored %v, %v", got.RetrySchedule, got.AttemptTimeout)
	}
	if v144 := epReadJSON(t, b.do(t, "GET", list+"/p", "", "X-Hookd-Api-Generation", "1.44"), http.StatusOK); v144["retrySchedule"] != nil || v144["timeoutSeconds"] != nil {
		t.Errorf("1.44 shape carries the retry policy: %v", v144)
	} else if _, ok := v144["timeoutSeconds"]; ok {
		t.Errorf("1.44 shape has a timeoutSeconds field")
	}

	// PUT without the fields keeps them; PATCH with null inherits; [] is no retries.
	ep = epReadJSON(t, b.do(t, "PUT", list+"/p", `{"url":"`+url+`","uid":"p","description":"d"}`), http.StatusOK)
	if !reflect.DeepEqual(ep["retrySchedule"], []any{0.05, 0.01}) || ep["timeoutSeconds"] != 1.5 {
		t.Fatalf("after PUT without them: %v, %v", ep["retrySchedule"], ep["timeoutSeconds"])
	}
	ep = epReadJSON(t, b.do(t, "PATCH", list+"/p", `{"retrySchedule":[],"timeoutSeconds":null}`), http.StatusOK)
	if !reflect.DeepEqual(ep["retrySchedule"], []any{}) || ep["timeoutSeconds"] != nil {
		t.Fatalf("after PATCH: %v, %v", ep["retrySchedule"], ep["timeoutSeconds"])
	}
	ep = epReadJSON(t, b.do(t, "PATCH", list+"/p", `{"retrySchedule":null}`), http.StatusOK)
	if ep["retrySchedule"] != nil {
		t.Fatalf("after PATCH null: %v", ep["retrySchedule"])
	}
	if plain := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`"}`), http.StatusCreated); plain["retrySchedule"] != nil || plain["timeoutSeconds"] != nil {
		t.Errorf("default: %v, %v; want null, null", plain["retrySchedule"], plain["timeoutSeconds"])
	}

	for _, tc := range []struct{ name, body, field string }{
		{"negative wait", `"retrySchedule":[-1]`, "retrySchedule"},
		{"too many retries", `"retrySchedule":[0.01,0.01,0.01]`, "retrySchedule"},
		{"wait over the server's longest", `"retrySchedule":[0.2]`, "retrySchedule"},
		{"not numbers", `"retrySchedule":["5s"]`, "retrySchedule"},
		{"not a list", `"retrySchedule":5`, "retrySchedule"},
		{"timeout over the bound", `"timeoutSeconds":31`, "timeoutSeconds"},
		{"zero timeout", `"timeoutSeconds":0`, "timeoutSeconds"},
		{"negative timeout", `"timeoutSeconds":-2`, "timeoutSeconds"},
		{"timeout not a number", `"timeoutSeconds":"10s"`, "timeoutSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want422(t, b.do(t, "POST", list, `{"url":"`+url+`",`+tc.body+`}`), tc.field)
			want422(t, b.do(t, "PATCH", list+"/p", `{`+tc.body+`}`), tc.field)
			want422(t, b.do(t, "PUT", list+"/p", `{"url":"`+url+`","uid":"p",`+tc.body+`}`), tc.field)
		})
	}
}

// TestApplicationRetryPolicy sets an application's default retry policy: POST, PUT (absent
// stays), PATCH, the bounds, and the 1.44 shape without the fields.
func TestApplicationRetryPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	app := epReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"A","uid":"a","retrySchedule":[0.1],"timeoutSeconds":3}`), http.StatusCreated)
	if !reflect.DeepEqual(app["retrySchedule"], []any{0.1}) || app["timeoutSeconds"] != 3.0 {
		t.Fatalf("created: %v", app)
	}
	app = epReadJSON(t, b.do(t, "PUT", "/api/v1/app/a", `{"name":"B","uid":"a"}`), http.StatusOK)
	if !reflect.DeepEqual(app["retrySchedule"], []any{0.1}) || app["timeoutSeconds"] != 3.0 || app["name"] != "B" {
		t.Fatalf("after PUT without them: %v", app)
	}
	app = epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/a", `{"timeoutSeconds":null,"retrySchedule":[0,0.1]}`), http.StatusOK)
	if !reflect.DeepEqual(app["retrySchedule"], []any{0.0, 0.1}) || app["timeoutSeconds"] != nil {
		t.Fatalf("after PATCH: %v", app)
	}
	a, err := b.client.GetApplication(b.ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.RetrySchedule, []time.Duration{0, 100 * time.Millisecond}) || a.AttemptTimeout != 0 {
		t.Fatalf("stored %v, %v", a.RetrySchedule, a.AttemptTimeout)
	}
	v144 := epReadJSON(t, b.do(t, "GET", "/api/v1/app/a", "", "X-Hookd-Api-Generation", "1.44"), http.StatusOK)
	if _, ok := v144["retrySchedule"]; ok {
		t.Errorf("1.44 shape carries retrySchedule: %v", v144)
	}
	want422(t, b.do(t, "PATCH", "/api/v1/app/a", `{"timeoutSeconds":60}`), "timeoutSeconds")
	want422(t, b.do(t, "PATCH", "/api/v1/app/a", `{"retrySchedule":[0.1,0.1,0.1]}`), "retrySchedule")
	want422(t, b.do(t, "POST", "/api/v1/app", `{"name":"C","retrySchedule":["x"]}`), "retrySchedule")
	want422(t, b.do(t, "PUT", "/api/v1/app/a", `{"name":"C","uid":"a","retrySchedule":[-0.5]}`), "retrySchedule")
}
