#!/usr/bin/env bash
# Runs the trainer adapters (adapters/*.py) against a live `calibrl serve`
# on loopback, each driven by a stand-in of its trainer written from the
# trainer's code (adapters/conformance_*.py), with plain python3 (no
# packages): see adapters/test_adapters.py and adapters/test_verl_agent_loop.py.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
python3 adapters/test_adapters.py "$tmp/calibrl"
# verl 0.8 and later: the agent loop, its stand-in, and two replicas with
# one killed mid-run.
python3 adapters/test_verl_agent_loop.py "$tmp/calibrl" --kill 60
# docs/scale.md's steps 1, 2, 5-8 as written, rows trained against the
# simulator the page serves: no row may be refused.
python3 adapters/test_scale_path.py "$tmp/calibrl"
