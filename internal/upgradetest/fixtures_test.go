package upgradetest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestFixtures checks what the upgrade test relies on in every committed fixture: its files, a
// receiver address of its own that every endpoint URL points to, and deliveries that name
// endpoints of their application.
func TestFixtures(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "testdata", "upgrade")
	receivers := map[string]string{}
	for _, store := range []string{StoreSQLite, StorePostgres} {
		dirs, err := Fixtures(root, store)
		if err != nil {
			t.Fatal(err)
		}
		if len(dirs) == 0 {
			t.Errorf("no %s fixture under %s", store, root)
		}
		for _, dir := range dirs {
			m, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, dir, store, m)
			if other, taken := receivers[m.Receiver]; taken {
				t.Errorf("%s and %s share the receiver address %s", other, dir, m.Receiver)
			}
			receivers[m.Receiver] = dir
		}
	}
}

func checkFixture(t *testing.T, dir, store string, m *Manifest) {
	t.Helper()
	data := SQLiteFile
	if store == StorePostgres {
		data = DumpFile
	}
	if _, err := os.Stat(filepath.Join(dir, data)); err != nil {
		t.Errorf("%s: %v", dir, err)
	}
	if m.Store != store || m.Name != filepath.Base(dir) || m.AdminToken == "" || m.State == "" || m.Built == "" {
		t.Errorf("%s: manifest of store %q, name %q, state %q, built %q, admin token set %v", dir, m.Store, m.Name, m.State, m.Built, m.AdminToken != "")
	}
	pending := 0
	for _, a := range m.Applications {
		endpoints := map[string]bool{}
		for _, e := range a.Endpoints {
			endpoints[ID(e.Endpoint)] = true
			var ep struct {
				URL string `json:"url"`
			}
			if err := json.Unmarshal(e.Endpoint, &ep); err != nil {
				t.Fatalf("%s: endpoint %s: %v", dir, ID(e.Endpoint), err)
			}
			if u, err := url.Parse(ep.URL); err != nil || u.Host != m.Receiver {
				t.Errorf("%s: endpoint %s's URL %q is not at the fixture's receiver %s", dir, ID(e.Endpoint), ep.URL, m.Receiver)
			}
			if e.Secret == "" {
				t.Errorf("%s: endpoint %s has no secret", dir, ID(e.Endpoint))
			}
		}
		for _, msg := range a.Messages {
			for _, d := range msg.Deliveries {
				if !endpoints[d.Endpoint] {
					t.Errorf("%s: message %s's delivery names endpoint %s, not one of its application's", dir, ID(msg.Message), d.Endpoint)
				}
				switch d.State {
				case Pending:
					pending++
				case Delivered, Failed:
				default:
					t.Errorf("%s: message %s: delivery state %q", dir, ID(msg.Message), d.State)
				}
			}
		}
	}
	if pending == 0 {
		t.Errorf("%s: no delivery expected pending", dir)
	}
}
