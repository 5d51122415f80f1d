package server

import (
	"net/http"
	"testing"
)

// TestEndpointOrdered sets an endpoint's ordered flag through the API: on create, get, list, PUT
// (absent stays), PATCH (false and null turn it off), shown to today's clients and not to 1.44's;
// a value that is not a boolean is a 422 naming the field.
func TestEndpointOrdered(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	epTestApp(t, b, "acme")
	const list = "/api/v1/app/acme/endpoint"
	url := b.recv.URL("/o")

	ep := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`","uid":"o","ordered":true}`), http.StatusCreated)
	if ep["ordered"] != true {
		t.Fatalf("created: ordered %v, want true", ep["ordered"])
	}
	if got, err := b.client.GetEndpoint(b.ctx, "acme", "o"); err != nil || !got.Ordered {
		t.Fatalf("stored: %+v, %v", got, err)
	}
	if ep := epReadJSON(t, b.do(t, "GET", list+"/o", ""), http.StatusOK); ep["ordered"] != true {
		t.Fatalf("get: ordered %v", ep["ordered"])
	}
	page := epReadJSON(t, b.do(t, "GET", list, ""), http.StatusOK)
	if data, _ := page["data"].([]any); len(data) != 1 || data[0].(map[string]any)["ordered"] != true {
		t.Fatalf("list: %v", page["data"])
	}
	v144 := epReadJSON(t, b.do(t, "GET", list+"/o", "", "X-Hookd-Api-Generation", "1.44"), http.StatusOK)
	if _, ok := v144["ordered"]; ok {
		t.Errorf("1.44 shape has an ordered field: %v", v144)
	}

	ep = epReadJSON(t, b.do(t, "PUT", list+"/o", `{"url":"`+url+`","uid":"o","description":"d"}`), http.StatusOK)
	if ep["ordered"] != true {
		t.Fatalf("after PUT without it: ordered %v, want true", ep["ordered"])
	}
	ep = epReadJSON(t, b.do(t, "PATCH", list+"/o", `{"ordered":false}`), http.StatusOK)
	if ep["ordered"] != false {
		t.Fatalf("after PATCH false: ordered %v", ep["ordered"])
	}
	ep = epReadJSON(t, b.do(t, "PUT", list+"/o", `{"url":"`+url+`","uid":"o","ordered":true}`), http.StatusOK)
	if ep["ordered"] != true {
		t.Fatalf("after PUT true: ordered %v", ep["ordered"])
	}
	ep = epReadJSON(t, b.do(t, "PATCH", list+"/o", `{"ordered":null}`), http.StatusOK)
	if ep["ordered"] != false {
		t.Fatalf("after PATCH null: ordered %v", ep["ordered"])
	}
	if plain := epReadJSON(t, b.do(t, "POST", list, `{"url":"`+url+`"}`), http.StatusCreated); plain["ordered"] != false {
		t.Errorf("default: ordered %v, want false", plain["ordered"])
	}

	for _, body := range []string{`"ordered":"yes"`, `"ordered":1`} {
		want422(t, b.do(t, "POST", list, `{"url":"`+url+`",`+body+`}`), "ordered")
		want422(t, b.do(t, "PATCH", list+"/o", `{`+body+`}`), "ordered")
		want422(t, b.do(t, "PUT", list+"/o", `{"url":"`+url+`","uid":"o",`+body+`}`), "ordered")
	}
}
