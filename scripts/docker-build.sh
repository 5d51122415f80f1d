#!/usr/bin/env bash
# Builds the hookd container image: a static binary, the build machine's CA certificates and an
# /etc/passwd line, staged in a temporary context, on an empty base (see the Dockerfile).
#
# Usage: scripts/docker-build.sh [TAG]      TAG defaults to hookd:latest
# Environment: CA_CERTS, the certificate bundle to copy (default /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail

tag=${1:-hookd:latest}
root=$(cd "$(dirname "$0")/.." && pwd)
ca=${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}

if [ ! -s "$ca" ]; then
  echo "docker-build: no CA certificate bundle at $ca (install ca-certificates or set CA_CERTS)" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

# -buildvcs=auto stamps the revision (shown by "hookd version" and hookd_build_info) when the
# source is a git checkout, overriding a -buildvcs=false in GOFLAGS.
(cd "$root" && CGO_ENABLED=0 go build -buildvcs=auto -trimpath -ldflags='-s -w' -o "$ctx/hookd" ./cmd/hookd)
cp "$ca" "$ctx/ca-certificates.crt"
printf 'hookd:x:65532:65532:hookd:/data:/sbin/nologin\n' > "$ctx/passwd"
mkdir "$ctx/data"
cp "$root/Dockerfile" "$root/.dockerignore" "$ctx/"

docker build --quiet -t "$tag" "$ctx"
