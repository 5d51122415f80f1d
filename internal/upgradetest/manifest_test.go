package upgradetest

import "testing"

func TestReceiverAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		store string
		n     int
		want  string
		bad   bool
	}{
		{store: StoreSQLite, n: 1, want: "127.27.1.1:2727"},
		{store: StorePostgres, n: 16, want: "127.27.2.16:2727"},
		{store: StoreSQLite, n: 254, want: "127.27.1.254:2727"},
		{store: StoreSQLite, n: 0, bad: true},
		{store: StorePostgres, n: 255, bad: true},
		{store: "mysql", n: 1, bad: true},
	} {
		got, err := ReceiverAddr(c.store, c.n)
		if c.bad {
			if err == nil {
				t.Errorf("ReceiverAddr(%q, %d) = %q, want an error", c.store, c.n, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ReceiverAddr(%q, %d) = %q, %v; want %q", c.store, c.n, got, err, c.want)
		}
	}
}
