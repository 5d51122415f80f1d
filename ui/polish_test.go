package ui_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// TestOperationalAppApart: the applications page lists hookd's own application (operational
// webhooks) apart from the customers'.
func TestOperationalAppApart(t *testing.T) {
	s := newSite(t, false)
	own, err := s.client.CreateApplication(context.Background(), &hookd.ApplicationIn{Name: "hookd operational webhooks", UID: hookd.OperationalAppUID})
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := get(t, s.signIn(t), s.srv.URL+"/ui/")
	customers := regexp.MustCompile(`(?s)<table class="apps" id="customer-apps">.*?</table>`).FindString(body)
	apart := regexp.MustCompile(`(?s)<section id="operational-app">.*?</section>`).FindString(body)
	if !strings.Contains(customers, "Acme") || !strings.Contains(customers, "Globex") || strings.Contains(customers, own.ID) {
		t.Errorf("the customers' table:\n%s", customers)
	}
	if !strings.Contains(apart, "/ui/app/"+own.ID) {
		t.Errorf("hookd's own application is not shown apart:\n%s", body)
	}
}

// TestEndpointTableSaysTheLastError: an endpoint whose last attempt got no response shows why
// ("connection refused"), not "no response"; an HTTP error is said once.
func TestEndpointTableSaysTheLastError(t *testing.T) {
	s := newSite(t, true)
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/hook"
	l.Close()
	if _, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: closed}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, _, body = get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID)
		if strings.Contains(body, "connection refused") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint table does not say connection refused:\n%s", body)
		}
	}
	if strings.Contains(body, "no response") {
		t.Errorf("the endpoint table still says no response:\n%s", body)
	}
	ep, err := s.client.ListEndpoints(ctx, s.acme.ID, hookd.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, page := get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"/endpoint/"+ep.Data[0].ID)
	if n := strings.Count(page, "connection refused"); n < 1 || strings.Contains(page, "— connection refused") {
		t.Errorf("the endpoint page says the error %d times or twice in a line:\n%s", n, page)
	}
}

// The message log's status filter names endpoints by URL and counts "1 attempt".
func TestStatusFilterNamesEndpointsByURL(t *testing.T) {
	s := newSite(t, true)
	ctx := context.Background()
	failing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	srv := newServer(t, failing)
	ep, err := s.client.CreateEndpoint(ctx, s.acme.ID, &hookd.EndpointIn{URL: srv + "/failing"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Send(ctx, s.acme.ID, &hookd.MessageIn{EventType: "invoice.paid", Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	c := s.signIn(t)
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, _, body = get(t, c, s.srv.URL+"/ui/app/"+s.acme.ID+"?status=pending")
		if strings.Contains(body, "1 attempt<") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pending filter does not show 1 attempt:\n%s", body)
		}
	}
	if !strings.Contains(body, `class="url">`+srv+`/failing</a>`) || strings.Contains(body, "<code>"+ep.ID+"</code>") {
		t.Errorf("the pending filter does not name the endpoint by URL:\n%s", body)
	}
}

// newServer serves h on 127.0.0.1 for the test and returns its URL.
func newServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
