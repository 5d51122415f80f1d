package buildinfo_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hookd/hookd/internal/buildinfo"
)

// releaseHeading is a release's heading in CHANGELOG.md: "## v0.1.0 — 2026-12-05".
var releaseHeading = regexp.MustCompile(`^## (v[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?) — ([0-9]{4}-[0-9]{2}-[0-9]{2})$`)

// CHANGELOG.md's newest release is the release this source says it is: a release changes
// both, or this test fails.
func TestChangelogNamesRelease(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var releases []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "## ") {
			continue
		}
		if h := strings.TrimSpace(strings.Trim(line[3:], "[] ")); strings.EqualFold(h, "unreleased") {
			continue // what the next release will hold
		}
		m := releaseHeading.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("CHANGELOG.md: heading %q is not a release heading such as \"## v0.1.0 — 2026-12-05\" (or \"## Unreleased\")", line)
		}
		releases = append(releases, m[1])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(releases) == 0 {
		t.Fatal("CHANGELOG.md names no release")
	}
	if releases[0] != buildinfo.Release {
		t.Fatalf("CHANGELOG.md's newest release is %s, buildinfo.Release is %s: a release changes both", releases[0], buildinfo.Release)
	}
}
