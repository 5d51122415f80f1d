package server

import "testing"

// The SDKs 1.99 write an endpoint back with both names of its rate, as a GET returned them (the
// npm one sends rateLimit and throttleRate on every update): both are taken, and a throttleRate
// with a value wins, as Svix's server reads them.
func TestEndpointRateUnderBothNames(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "rates")
	created := epReadJSON(t, b.do(t, "POST", "/api/v1/app/rates/endpoint",
		`{"url":"`+b.recv.URL("/r")+`","rateLimit":5,"throttleRate":5}`), 201)
	if created["throttleRate"] != float64(5) || created["rateLimit"] != float64(5) {
		t.Fatalf("create with both names equal: throttleRate %v, rateLimit %v; want 5", created["throttleRate"], created["rateLimit"])
	}
	path := "/api/v1/app/rates/endpoint/" + created["id"].(string)
	for _, tc := range []struct {
		method, body string
		want         any
	}{
		{"PUT", `{"url":"` + b.recv.URL("/r") + `","rateLimit":3,"throttleRate":7}`, float64(7)},
		{"PUT", `{"url":"` + b.recv.URL("/r") + `","rateLimit":4,"throttleRate":null}`, float64(4)},
		{"PATCH", `{"rateLimit":null,"throttleRate":9}`, float64(9)},
		{"PUT", `{"url":"` + b.recv.URL("/r") + `","rateLimit":null,"throttleRate":null}`, nil},
	} {
		out := epReadJSON(t, b.do(t, tc.method, path, tc.body), 200)
		if out["throttleRate"] != tc.want || out["rateLimit"] != tc.want {
			t.Errorf("%s %s: throttleRate %v, rateLimit %v; want %v", tc.method, tc.body, out["throttleRate"], out["rateLimit"], tc.want)
		}
	}
}
