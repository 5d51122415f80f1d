#!/usr/bin/env bash
# Runs the README's quick start exactly as written, pasted as one block into a fresh shell with no
# sleep added, RUNS times in a row (default 3), and checks each time that the receiver verified
# the webhook and that the attempt log holds one attempt, answered 200.
#
# The block runs in the repository's root, as in a reader's checkout: its go install line builds
# this tree into a GOPATH of its own (so the hookd it puts first on PATH is this one). The shell
# has no HOOKD_* variable but HOOKD_DB, which keeps serve's SQLite file in a temporary directory,
# a fresh one each run, rather than in the checkout. Ports 8071 and 9000 must be free.
#
# Usage: scripts/quickstart-check.sh [RUNS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for port in 8071 9000; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "quick start: something listens on 127.0.0.1:$port, which the quick start needs; stop it first" >&2
    exit 1
  fi
done

# The first sh block of the README's Quick start section, as a reader pastes it.
awk '/^## Quick start/ {in_section = 1; next}
     in_section && /^## / {exit}
     in_section && /^```sh$/ {in_block = 1; next}
     in_block && /^```$/ {exit}
     in_block {print}' "$root/README.md" >"$work/quickstart.sh"
if ! grep -q '^hookd serve' "$work/quickstart.sh"; then
  echo "quick start: no sh block with hookd serve found in README.md's Quick start section" >&2
  exit 1
fi
# The shell stops at a failing line (bash -e) and, when the block ends, stops what it started in
# the background (serve and listen) and waits for them, so that the next run finds the ports free.
{
  echo "trap 'kill \$(jobs -p) 2>/dev/null; wait' EXIT"
  cat "$work/quickstart.sh"
} >"$work/steps.sh"

gomodcache="$(go env GOMODCACHE)"
gocache="$(go env GOCACHE)"
for run in $(seq "$runs"); do
  dir="$work/run$run"
  mkdir -p "$dir"
  if ! (
    cd "$root"
    for v in $(compgen -v HOOKD_); do unset "$v"; done
    unset GOBIN DATABASE_URL
    export GOPATH="$work/gopath" GOMODCACHE="$gomodcache" GOCACHE="$gocache" HOOKD_DB="sqlite:$dir/hookd.db"
    exec bash -e "$work/steps.sh"
  ) >"$dir/out.txt" 2>&1; then
    cat "$dir/out.txt"
    echo "quick start, run $run of $runs: a line failed" >&2
    exit 1
  fi
  fail() { cat "$dir/out.txt"; echo "quick start, run $run of $runs: $1" >&2; exit 1; }
  grep -qE '^[0-9:]{8} verified msg_[0-9A-Za-z]+ \{"invoice":"in_1"\}$' "$dir/out.txt" ||
    fail "the receiver printed no verified webhook"
  ! grep -q 'NOT VERIFIED' "$dir/out.txt" || fail "the receiver refused a request"
  attempts="$(grep -cE '^atmpt_' "$dir/out.txt" || true)"
  [ "$attempts" = 1 ] || fail "the attempt log shows $attempts attempts, want 1"
  grep -qE '^atmpt_.* success +200 ' "$dir/out.txt" || fail "the attempt log's one attempt is not a 200"
  echo "quick start, run $run of $runs: delivered at the first attempt, verified by the receiver, logged with status 200"
done
