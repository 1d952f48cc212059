#!/usr/bin/env bash
# Plays episodes through `calibrl serve`'s OpenEnv interface on loopback,
# as OpenEnv's own client does, with plain python3 (no packages): see
# scripts/openenv_check.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
python3 scripts/openenv_check.py "$tmp/calibrl"
