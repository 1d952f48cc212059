#!/usr/bin/env bash
# Runs the trainer adapters (adapters/*.py) against a live `calibrl serve`
# on loopback, each driven by a stand-in of its trainer written from the
# trainer's code (adapters/conformance_*.py), with plain python3 (no
# packages): see adapters/test_adapters.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
python3 adapters/test_adapters.py "$tmp/calibrl"
# docs/scale.md's steps 1, 2, 5-8 as written, rows trained against the
# simulator the page serves: no row may be refused.
python3 adapters/test_scale_path.py "$tmp/calibrl"
