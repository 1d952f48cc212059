#!/usr/bin/env bash
# Runs the trainer adapters (adapters/*.py) against a live `calibrl serve`
# on loopback, with plain python3 (no packages): see adapters/test_adapters.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
python3 adapters/test_adapters.py "$tmp/calibrl"
