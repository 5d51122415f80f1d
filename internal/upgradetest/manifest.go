// Package upgradetest holds what the upgrade test (cmd/hookd/upgrade_test.go) and the program that
// makes its fixtures (fixturegen) share: the manifest of a fixture, which records what the build
// that wrote the database answered through its API, and the fixtures' layout under testdata.
//
// A fixture is a database written by an earlier build's own "hookd serve" (an SQLite file, or a
// PostgreSQL dump) beside a manifest.json. The test opens the database with the code under test
// and checks through the API that everything reads back as the manifest says and that every
// delivery the manifest expects pending is delivered, once, to the fixture's receiver address.
package upgradetest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Stores, as the fixtures' directories name them.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// Files of a fixture's directory.
const (
	ManifestFile = "manifest.json"
	SQLiteFile   = "hookd.db.gz" // the SQLite file, gzipped
	DumpFile     = "dump.sql.gz" // pg_dump --no-owner --no-privileges --inserts, gzipped
	ReceiverPort = 2727          // every fixture's receiver listens on this port of its own address
)

// ReceiverAddr is the host:port of fixture number n of store, 127.27.S.N:2727 (S is 1 for
// SQLite, 2 for PostgreSQL): every endpoint URL of that fixture points there, so the test binds
// the same address, and no two fixtures share one. Linux routes all of 127.0.0.0/8 to lo.
func ReceiverAddr(store string, n int) (string, error) {
	s := 0
	switch store {
	case StoreSQLite:
		s = 1
	case StorePostgres:
		s = 2
	default:
		return "", fmt.Errorf("store %q: want %s or %s", store, StoreSQLite, StorePostgres)
	}
	if n < 1 || n > 254 {
		return "", fmt.Errorf("fixture number %d: want 1 to 254", n)
	}
	return fmt.Sprintf("127.27.%d.%d:%d", s, n, ReceiverPort), nil
}

// Delivery states a manifest records.
const (
	Delivered = "delivered" // the receiver answered 2xx: never sent again
	Failed    = "failed"    // every try of the schedule failed: never sent again
	Pending   = "pending"   // due: the code under test must deliver it, once
)

// Endpoint roles: what the generator's receiver did at the endpoint's path.
const (
	RoleOK      = "ok"      // answered 200
	RoleDown    = "down"    // answered 500: the first attempt failed, a retry is due
	RoleDead    = "dead"    // answered 500 until the schedule was exhausted
	RoleOrdered = "ordered" // an ordered endpoint answering 500: its head failed, the rest wait behind it
	RoleHang    = "hang"    // never answered: the server was killed while the attempts hung
	RoleQueued  = "queued"  // never called: the messages went in through an API-only server
)

// Manifest is what a fixture's build answered, as fixturegen recorded it.
type Manifest struct {
	Store string `json:"store"` // StoreSQLite or StorePostgres
	Name  string `json:"name"`  // the fixture's directory name
	// State is the commit of main's first-parent history whose migrations the database has;
	// Built is the commit whose binary wrote it (the first with the same migrations and a
	// "hookd serve" able to run on the store).
	State       string    `json:"state"`
	Built       string    `json:"built"`
	GeneratedAt time.Time `json:"generatedAt"`
	// Receiver is the host:port every endpoint URL points to (ReceiverAddr).
	Receiver string `json:"receiver"`
	// AdminToken is the token the build ran with (--token).
	AdminToken string `json:"adminToken"`
	// Portal is the app-portal token the build issued, nil if it issued none.
	Portal *PortalToken `json:"portal,omitempty"`
	// Skipped lists what the scenario asked of the build and the build did not have, each with
	// the answer that showed it.
	Skipped []string `json:"skipped,omitempty"`
	// Phases lists how the build's servers ran, in order (flags and how each ended).
	Phases []string `json:"phases"`

	EventTypes   []json.RawMessage `json:"eventTypes,omitempty"` // GET /api/v1/event-type/{name}
	Applications []Application     `json:"applications"`
}

// PortalToken is an app-portal token and the application it was issued for.
type PortalToken struct {
	App   string `json:"app"` // the application's id
	Token string `json:"token"`
	// Expires is when the build said it expires (the generator asked for the longest life).
	Expires time.Time `json:"expires"`
}

// Application is one application and everything under it, as the build answered.
type Application struct {
	App       json.RawMessage `json:"app"` // GET /api/v1/app/{id}
	Endpoints []Endpoint      `json:"endpoints"`
	Messages  []Message       `json:"messages"` // in the order they were sent
}

// Endpoint is one endpoint, as the build answered.
type Endpoint struct {
	Role     string          `json:"role"`              // Role*
	Endpoint json.RawMessage `json:"endpoint"`          // GET .../endpoint/{id}
	Secret   string          `json:"secret"`            // GET .../secret: the current key, after any rotation
	Rotated  bool            `json:"rotated,omitempty"` // the secret was rotated once
	Headers  json.RawMessage `json:"headers,omitempty"` // GET .../headers
	// Ordered is true when the build kept the endpoint ordered: its pending deliveries arrive in
	// message order.
	Ordered bool `json:"ordered,omitempty"`
}

// Message is one message, its attempts, and what is expected of each of its deliveries.
type Message struct {
	Message    json.RawMessage   `json:"message"`    // GET .../msg/{id}
	Attempts   []json.RawMessage `json:"attempts"`   // GET .../attempt/msg/{id}, every page
	Deliveries []Delivery        `json:"deliveries"` // one for each endpoint the message goes to
}

// Delivery is a message's delivery to one endpoint.
type Delivery struct {
	Endpoint string `json:"endpoint"` // the endpoint's id
	State    string `json:"state"`    // Delivered, Failed or Pending
}

// ID reads the "id" of a recorded object.
func ID(raw json.RawMessage) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.ID
}

// Load reads the manifest of the fixture in dir.
func Load(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("load upgrade fixture: %w", err)
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("load upgrade fixture %s: %w", dir, err)
	}
	return m, nil
}

// Write writes m as dir's manifest.
func (m *Manifest) Write(dir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write upgrade manifest: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644)
}

// Fixtures returns the fixture directories of store under root (testdata/upgrade), sorted.
func Fixtures(root, store string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, store))
	if err != nil {
		return nil, fmt.Errorf("list upgrade fixtures: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, store, e.Name()))
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}
