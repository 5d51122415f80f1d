#!/usr/bin/env bash
# Runs the README's quick start as written (all but its go install, with a hookd built from this
# tree first on PATH) in a fresh directory, and checks that the receiver verified the webhook and
# the attempt log shows a 200. It needs ports 8071 and 9000 free.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
GOBIN="$work/bin" go install "$root/cmd/hookd"
export PATH="$work/bin:$PATH"
sed -n '/^## Quick start/,/^## /p' "$root/README.md" | sed -n '/^```sh$/,/^```$/p' | grep -v '^```' | grep -v '^go install' >"$work/quickstart.sh"
cd "$work"
# The steps in the background (serve, listen) are given a moment to bind, as a reader typing them would.
awk '{print} /&( |$)/ {print "sleep 1"}' quickstart.sh >steps.sh
echo 'kill $(jobs -p) 2>/dev/null; wait' >>steps.sh
bash steps.sh >out.txt 2>&1 || { cat out.txt; echo "quick start: a step failed"; exit 1; }
sleep 1
if ! grep -qE '^[0-9:]{8} verified msg_[0-9A-Za-z]+ \{"invoice":"in_1"\}$' out.txt; then
  cat out.txt; echo "quick start: the receiver printed no verified webhook"; exit 1
fi
if ! grep -qE 'success +200 ' out.txt; then
  cat out.txt; echo "quick start: the attempt log shows no 200"; exit 1
fi
echo "quick start: the webhook was delivered, verified by the receiver, and logged with status 200"
