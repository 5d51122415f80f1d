package server

import (
	"net/http"
	"reflect"
	"testing"
)

// A create, a replace or a patch answers with exactly what a later GET returns, the times to the
// same digit included.
func TestWritesAnswerWhatGetReturns(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	same := func(what string, wrote map[string]any, path string) {
		t.Helper()
		read := epReadJSON(t, b.do(t, "GET", path, ""), http.StatusOK)
		if !reflect.DeepEqual(wrote, read) {
			t.Errorf("%s answered %v\nGET %s returns %v", what, wrote, path, read)
		}
	}
	app := epReadJSON(t, b.do(t, "POST", "/api/v1/app", `{"name":"Times","uid":"times"}`), http.StatusCreated)
	same("POST app", app, "/api/v1/app/times")
	same("PUT app", epReadJSON(t, b.do(t, "PUT", "/api/v1/app/times", `{"name":"Times 2","uid":"times"}`), http.StatusOK), "/api/v1/app/times")
	same("PATCH app", epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/times", `{"name":"Times 3"}`), http.StatusOK), "/api/v1/app/times")

	ep := epReadJSON(t, b.do(t, "POST", "/api/v1/app/times/endpoint", `{"url":"https://example.com/a","uid":"ep"}`), http.StatusCreated)
	same("POST endpoint", ep, "/api/v1/app/times/endpoint/ep")
	same("PUT endpoint", epReadJSON(t, b.do(t, "PUT", "/api/v1/app/times/endpoint/ep", `{"url":"https://example.com/b","uid":"ep"}`), http.StatusOK), "/api/v1/app/times/endpoint/ep")
	same("PATCH endpoint", epReadJSON(t, b.do(t, "PATCH", "/api/v1/app/times/endpoint/ep", `{"description":"d"}`), http.StatusOK), "/api/v1/app/times/endpoint/ep")

	et := epReadJSON(t, b.do(t, "POST", "/api/v1/event-type", `{"name":"invoice.paid","description":"Paid"}`), http.StatusCreated)
	same("POST event type", et, "/api/v1/event-type/invoice.paid")
	same("PATCH event type", epReadJSON(t, b.do(t, "PATCH", "/api/v1/event-type/invoice.paid", `{"description":"Paid 2"}`), http.StatusOK), "/api/v1/event-type/invoice.paid")

	msg := epReadJSON(t, b.do(t, "POST", "/api/v1/app/times/msg", `{"eventType":"invoice.paid","eventId":"evt-1","payload":{"n":1}}`), http.StatusAccepted)
	same("POST message", msg, "/api/v1/app/times/msg/evt-1")
}
