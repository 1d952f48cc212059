#!/usr/bin/env bash
# Two `calibrl serve` replicas on loopback, one killed mid-run: episodes
# through each adapter (verl's BaseInteraction, TRL, OpenRLHF, driven by
# their trainers' stand-ins) and the remote: user (sticky and alternating
# routing) must all finish with the expected reward. Plain python3; prints
# episodes lost, calls sent again and the p99 of a turn per run. About 30 s
# on two cores; EPISODES=N sets the episodes per run (default 260).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl
timeout 600 python3 adapters/test_replicas.py "$tmp/calibrl" --episodes "${EPISODES:-260}"
