package migrations

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd"
)

// knownFive is a build's migrations 1 to 5; migrations up to 3 came before checksums.
func knownFive() []Migration {
	var out []Migration
	for v := 1; v <= 5; v++ {
		text := fmt.Sprintf("CREATE TABLE t%d (x int);", v)
		out = append(out, Migration{Version: v, Name: fmt.Sprintf("%04d_t%d", v, v), SQL: text, Checksum: Checksum([]byte(text))})
	}
	return out
}

const uncheckedFive = 3

// rec is the row a runner writes for version v of knownFive; legacy leaves out the checksum.
func rec(v int, legacy bool) Record {
	m := knownFive()[v-1]
	r := Record{Version: v, Name: m.Name, Checksum: m.Checksum, AppliedAt: time.Unix(int64(v), 0)}
	if legacy {
		r.Checksum = ""
	}
	return r
}

func versions(ms []Migration) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.Version)
	}
	return out
}

func TestDecide(t *testing.T) {
	t.Parallel()
	renamed := rec(2, true)
	renamed.Name = "0002_other"
	changed := rec(4, false)
	changed.Checksum = Checksum([]byte("another text"))
	for _, tc := range []struct {
		name     string
		recorded []Record
		pending  []int
		// refused, when not 0, is the version the refusal names; name and words are in its text.
		refused int
		words   []string
	}{
		{name: "new database", pending: []int{1, 2, 3, 4, 5}},
		{name: "up to date", recorded: []Record{rec(1, false), rec(2, false), rec(3, false), rec(4, false), rec(5, false)}},
		{name: "rows before checksums", recorded: []Record{rec(1, true), rec(2, true), rec(3, true)}, pending: []int{4, 5}},
		{name: "missing below the highest, rows in any order", recorded: []Record{rec(4, false), rec(1, true), rec(2, true)}, pending: []int{3, 5}},
		{name: "only the highest", recorded: []Record{rec(5, false)}, pending: []int{1, 2, 3, 4}},
		{
			name: "a version this build does not know", recorded: []Record{rec(1, true), {Version: 7, Name: "0007_later", Checksum: "ab"}},
			refused: 7, words: []string{"0007_later", "does not know", "run that release or later, or restore the backup taken before the upgrade"},
		},
		{
			name: "another checksum", recorded: []Record{rec(1, true), changed},
			refused: 4, words: []string{"0004_t4", "another text", "restore the backup"},
		},
		{
			name: "no checksum after checksums", recorded: []Record{rec(1, true), rec(4, true)},
			refused: 4, words: []string{"0004_t4", "without a checksum"},
		},
		{
			name: "another name", recorded: []Record{rec(1, true), renamed},
			refused: 2, words: []string{"(0002_t2)", "records version 2 as 0002_other"},
		},
		{
			name: "the first problem in version order", recorded: []Record{{Version: 9, Name: "0009_later"}, changed, renamed},
			refused: 2, words: []string{"0002_t2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Decide(knownFive(), tc.recorded, uncheckedFive)
			if tc.refused == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got := versions(p.Pending); !slices.Equal(got, tc.pending) {
					t.Fatalf("pending %v, want %v", got, tc.pending)
				}
				return
			}
			var se *SchemaError
			if !errors.Is(err, hookd.ErrIncompatibleSchema) || !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError wrapping ErrIncompatibleSchema", err)
			}
			if se.Version != tc.refused || len(p.Pending) != 0 {
				t.Fatalf("refused version %d with plan %v, want version %d and no plan", se.Version, versions(p.Pending), tc.refused)
			}
			for _, w := range append(tc.words, fmt.Sprintf("migration %d ", tc.refused)) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestPlanRun(t *testing.T) {
	t.Parallel()
	broken := errors.New("duplicate column name: tags")
	for _, tc := range []struct {
		name     string
		recorded []Record
		fail     int // the version whose apply fails; 0: none
		applied  []int
		refused  bool
	}{
		{name: "all in version order", recorded: []Record{rec(4, false), rec(2, true)}, applied: []int{1, 3, 5}},
		{name: "a missing one fails", recorded: []Record{rec(4, false), rec(2, true)}, fail: 3, applied: []int{1}, refused: true},
		{name: "one above the highest fails", recorded: []Record{rec(4, false), rec(2, true)}, fail: 5, applied: []int{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Decide(knownFive(), tc.recorded, uncheckedFive)
			if err != nil {
				t.Fatal(err)
			}
			var applied []int
			err = p.Run(func(m Migration) error {
				if m.Version == tc.fail {
					return broken
				}
				applied = append(applied, m.Version)
				return nil
			})
			if !slices.Equal(applied, tc.applied) {
				t.Errorf("applied %v, want %v", applied, tc.applied)
			}
			if tc.fail == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			name := knownFive()[tc.fail-1].Name
			if !errors.Is(err, broken) || !strings.Contains(err.Error(), name) {
				t.Fatalf("err = %v, want the cause, naming %s", err, name)
			}
			if got := errors.Is(err, hookd.ErrIncompatibleSchema); got != tc.refused {
				t.Fatalf("errors.Is(%v, ErrIncompatibleSchema) = %v, want %v", err, got, tc.refused)
			}
			if tc.refused && !strings.Contains(err.Error(), "missing below recorded migration 4") {
				t.Errorf("error %q does not say what the migration is missing below", err)
			}
		})
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	changed := rec(5, false)
	changed.Checksum = Checksum([]byte("another text"))
	got := Report(knownFive(), []Record{changed, rec(1, true), rec(3, false), {Version: 8, Name: "0008_later", Checksum: "ab", AppliedAt: time.Unix(8, 0)}}, uncheckedFive)
	type row struct {
		version            int
		name               string
		state              State
		unchecked, missing bool
		refused            bool
	}
	want := []row{
		{1, "0001_t1", Applied, true, false, false},
		{2, "0002_t2", Pending, false, true, false},
		{3, "0003_t3", Applied, false, false, false},
		{4, "0004_t4", Pending, false, true, false},
		{5, "0005_t5", Applied, false, false, true},
		{8, "0008_later", Unknown, false, false, true},
	}
	if len(got) != len(want) {
		t.Fatalf("Report = %+v, want %d rows", got, len(want))
	}
	for i, s := range got {
		r := row{s.Version, s.Name, s.State, s.Unchecked, s.Missing, s.Problem != nil}
		if r != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, r, want[i])
		}
		if s.State != Pending && s.AppliedAt.IsZero() {
			t.Errorf("row %d: no applied time", i)
		}
		if s.Problem != nil && !errors.Is(s.Problem, hookd.ErrIncompatibleSchema) {
			t.Errorf("row %d: problem %v does not wrap ErrIncompatibleSchema", i, s.Problem)
		}
	}
}
