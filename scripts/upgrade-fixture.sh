#!/usr/bin/env bash
# Makes an upgrade fixture: builds hookd at REF in a temporary worktree and runs fixturegen
# (internal/upgradetest/fixturegen) with that binary, which writes testdata/upgrade/STORE/NAME.
#
#   scripts/upgrade-fixture.sh [--store sqlite|postgres] [--state COMMIT] REF NAME
#
# --store: the store to make it for; both when absent (postgres needs HOOKD_TEST_POSTGRES_URL and
#   pg_dump). --state: the commit whose migrations the database has, when REF is a later commit
#   with the same migrations (the first able to run "hookd serve" on the store); REF otherwise.
# HOOKD_FIXTURE_BINARY: a hookd already built from REF, to skip the build.
#
# A fixture keeps its receiver address (127.27.S.N:2727) when it is made again; a new one takes
# the next free N of its store. testdata/upgrade/README.md says when to run this.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

stores=()
state=""
while [ $# -gt 0 ]; do
  case "$1" in
    --store) stores+=("$2"); shift 2 ;;
    --state) state="$2"; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown flag $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || usage
ref="$1"
name="$2"
[ ${#stores[@]} -gt 0 ] || stores=(sqlite postgres)
commit=$(git rev-parse --short=7 "$ref^{commit}")
state=$(git rev-parse --short=7 "${state:-$ref}^{commit}")

work=$(mktemp -d)
cleanup() {
  if [ -d "$work/src" ]; then git worktree remove --force "$work/src" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bin="${HOOKD_FIXTURE_BINARY:-}"
if [ -z "$bin" ]; then
  echo "building hookd at $commit" >&2
  git worktree add --detach "$work/src" "$commit" >/dev/null
  (cd "$work/src" && GOFLAGS=-buildvcs=false go build -o "$work/hookd" ./cmd/hookd)
  bin="$work/hookd"
fi
go build -o "$work/fixturegen" ./internal/upgradetest/fixturegen

# number STORE: the fixture's N, kept from its manifest, or the next free one.
number() {
  local dir="testdata/upgrade/$1" n
  if [ -f "$dir/$name/manifest.json" ]; then
    n=$(sed -n 's/.*"receiver": "127\.27\.[0-9]*\.\([0-9]*\):.*/\1/p' "$dir/$name/manifest.json")
    [ -n "$n" ] && { echo "$n"; return; }
  fi
  n=$( (cat "$dir"/*/manifest.json 2>/dev/null || true) | sed -n 's/.*"receiver": "127\.27\.[0-9]*\.\([0-9]*\):.*/\1/p' | sort -n | tail -1)
  echo $(( ${n:-0} + 1 ))
}

for store in "${stores[@]}"; do
  mkdir -p "testdata/upgrade/$store"
  "$work/fixturegen" --hookd "$bin" --store "$store" --number "$(number "$store")" \
    --state "$state" --built "$commit" --out "testdata/upgrade/$store/$name"
done
