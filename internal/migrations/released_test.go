package migrations

import (
	"strings"
	"testing"
)

func TestCheckReleased(t *testing.T) {
	t.Parallel()
	known := knownFive()[:3]
	manifest := func(ms []Migration) []Released {
		var out []Released
		for _, m := range ms {
			out = append(out, Released{Version: m.Version, Name: m.Name, Checksum: m.Checksum, Release: "v0.1.0"})
		}
		return out
	}
	changed := append([]Migration(nil), known...)
	changed[1].Checksum = Checksum([]byte("edited"))
	renamed := append([]Migration(nil), known...)
	renamed[1].Name = "0002_renamed"
	late := append(append([]Migration(nil), known[0], known[2]), Migration{Version: 2, Name: "0002_late", Checksum: Checksum(nil)})
	for _, tc := range []struct {
		name     string
		known    []Migration
		released []Released
		words    []string // in the error; none: no error
	}{
		{name: "as released", known: known, released: manifest(known)},
		{name: "a new file above", known: knownFive(), released: manifest(known)},
		{name: "a released file changed", known: changed, released: manifest(known), words: []string{"0002_t2, released in v0.1.0, changed", "new migration numbered above 3"}},
		{name: "a released file renamed", known: renamed, released: manifest(known), words: []string{"0002_t2", "now named 0002_renamed"}},
		{name: "a released file gone", known: known[1:], released: manifest(known), words: []string{"0001_t1", "has no file"}},
		{name: "a new file below", known: late, released: manifest([]Migration{known[0], known[2]}), words: []string{"0002_late is not released", "renumber it above 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReleased(tc.known, tc.released)
			if len(tc.words) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestParseReleased(t *testing.T) {
	t.Parallel()
	sum := knownFive()[0].Checksum
	got, err := ParseReleased("# version name sha256 release\n\n0001 0001_t1 " + sum + " v0.1.0\n0003 0003_t3 " + sum + " v0.2.0\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (Released{1, "0001_t1", sum, "v0.1.0"}) || got[1] != (Released{3, "0003_t3", sum, "v0.2.0"}) {
		t.Fatalf("ParseReleased = %+v", got)
	}
	for _, text := range []string{
		"0001 0001_t1 " + sum,                                            // no release
		"x 0001_t1 " + sum + " v0.1.0",                                   // no version
		"0001 0002_t1 " + sum + " v0.1.0",                                // the name of another version
		"0001 0001_t1 " + strings.ToUpper(sum) + " v0.1.0",               // not lowercase hex
		"0002 0002_a " + sum + " v0.1.0\n0001 0001_b " + sum + " v0.1.0", // falling
		"0001 0001_a " + sum + " v0.1.0\n0001 0001_b " + sum + " v0.1.0", // repeated
	} {
		if _, err := ParseReleased(text); err == nil {
			t.Errorf("ParseReleased(%q): no error", text)
		}
	}
}
