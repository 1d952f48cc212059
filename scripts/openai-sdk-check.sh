#!/usr/bin/env bash
# Checks calibrl serve's OpenAI surface with the official OpenAI Node SDK
# (npm "openai", installed into a temporary folder): /v1/models, the
# simulator's wire format (the rows export --kind sim writes), seeds,
# sampling fields honoured or refused, over-long prompts (played as in
# process), calls without max_tokens, streaming in chunks, the
# episode API's seeds, and that a server without --sim is not retried.
# Needs Go, node and npm (the npm registry); binds only 127.0.0.1 and stops
# its servers on exit. Not part of the Go suite.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return 0; sleep 0.1; done; echo "server on $1 did not start" >&2; return 1; }

go build -o "$tmp/calibrl" ./cmd/calibrl
bin="$tmp/calibrl"
# A small simulator: the check is of the surface, not of its quality.
"$bin" collect --task mathchat:easy --agent scripted:careful,sloppy,guesser -n 200 --max-turns 6 --out "$tmp/logs.jsonl" 2>/dev/null
"$bin" train-sim --task mathchat:easy --logs "$tmp/logs.jsonl" --out "$tmp/sim" --preset tiny >/dev/null 2>&1
"$bin" export --logs "$tmp/logs.jsonl" --kind sim --out "$tmp/sim.jsonl" 2>/dev/null
"$bin" export --logs "$tmp/logs.jsonl" --kind prompts --out "$tmp/prompts.jsonl" 2>/dev/null

sim=$(port); bare=$(port)
"$bin" serve --addr "127.0.0.1:$sim" --sim "$tmp/sim" 2>"$tmp/sim.log" & pids+=($!)
"$bin" serve --addr "127.0.0.1:$bare" 2>"$tmp/bare.log" & pids+=($!)
wait_up "$sim"; wait_up "$bare"

(cd "$tmp" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund openai >/dev/null)
echo "openai SDK $(node -p "require('$tmp/node_modules/openai/package.json').version"), node $(node --version)"
cp scripts/openai-sdk-check.mjs "$tmp/check.mjs"
(cd "$tmp" && node check.mjs "http://127.0.0.1:$sim" "http://127.0.0.1:$bare" sim.jsonl prompts.jsonl)
