#!/usr/bin/env bash
# compare.sh runs calibrl's engine benchmark (`calibrl bench --json`) and its
# PyTorch peer (bench/torch_peer.py) one after the other on this machine and
# prints both side by side with the Go/torch ratio of every figure.
#
# Usage: [GO_BENCH_FLAGS="--models A --steps 3"] bench/compare.sh [torch_peer.py options, e.g. --configs A --reps 5]
#
# It installs nothing. It needs Debian's python3-torch (1.13.1) with
# OpenBLAS: apt-get update && apt-get install -y python3-torch libopenblas0-openmp
# Torch is pinned to the OpenMP build of OpenBLAS through LD_LIBRARY_PATH,
# because with the reference BLAS it runs 35-70x slower and the comparison
# would mean nothing. Run it on a quiet machine: both sides use 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=/usr/bin/python3 # Debian's python, the one python3-torch installs into
OPENBLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-openmp
INSTALL="apt-get update && apt-get install -y python3-torch libopenblas0-openmp"

die() { echo "compare.sh: $*" >&2; exit 1; }

[ -x "$PY" ] || die "$PY not found; install Debian's python3 and torch: $INSTALL"
"$PY" -c 'import torch' 2>/dev/null ||
	die "torch is not importable by $PY (a pyenv or venv python will not see it); install: $INSTALL"
[ -e "$OPENBLAS_DIR/libblas.so.3" ] ||
	die "OpenBLAS (OpenMP build) not found in $OPENBLAS_DIR; install: $INSTALL"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/calibrl" ./cmd/calibrl || die "go build ./cmd/calibrl failed"
"$tmp/calibrl" bench --help 2>&1 | grep -q -- --json ||
	die "this calibrl has no 'bench' command yet (issue 3, package lm); nothing to compare"

echo "== calibrl bench --json (Go engine)" >&2
# shellcheck disable=SC2086 # GO_BENCH_FLAGS is a list of flags
"$tmp/calibrl" bench --json ${GO_BENCH_FLAGS:-} >"$tmp/go.json" || die "calibrl bench --json failed"
echo "== bench/torch_peer.py (PyTorch, OpenBLAS)" >&2
LD_LIBRARY_PATH="$OPENBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OMP_NUM_THREADS=2 \
	"$PY" bench/torch_peer.py "$@" >"$tmp/torch.json" || die "bench/torch_peer.py failed"

"$PY" - "$tmp/go.json" "$tmp/torch.json" <<'PYEOF'
import json, sys

def load(path, who):
    text = open(path).read().strip()
    try:
        return json.loads(text.splitlines()[-1])  # the JSON object is the last line
    except (ValueError, IndexError) as e:
        sys.exit(f"compare.sh: {who} did not print a JSON object ({e}): {text[:200]!r}")

go, th = load(sys.argv[1], "calibrl bench --json"), load(sys.argv[2], "torch_peer.py")
rows = []  # (figure, go, torch, higher_is_better)
tcfg = {c["name"]: c for c in th["configs"]}
for c in go["configs"]:
    t = tcfg.get(c["name"])
    if t is None:
        continue
    if c["params"] != t["params"]:
        print(f"warning: config {c['name']}: Go has {c['params']} parameters, torch {t['params']}", file=sys.stderr)
    n = c["name"]
    rows += [(f"{n} params", c["params"], t["params"], None),
             (f"{n} train tokens/s", c["train_tokens_per_s"], t["train_tokens_per_s"], True),
             (f"{n} forward ms", c["forward_ms"], t["forward_ms"], False),
             (f"{n} sample tokens/s", c["sample_tokens_per_s"], t["sample_tokens_per_s"], True)]
rows.append(("GEMM 2048^3 GFLOP/s", go["gemm_gflops_2048"], th["gemm_gflops_2048"], True))

def num(v):
    return f"{v:d}" if isinstance(v, int) else f"{v:.1f}"

print(f"{'figure':<24} {'Go':>12} {'torch':>12} {'Go/torch':>9} {'Go speed':>9}")
for name, g, t, higher in rows:
    ratio = g / t if t else float("nan")
    speed = "" if higher is None else f"{(ratio if higher else 1 / ratio):8.2f}x"
    print(f"{name:<24} {num(g):>12} {num(t):>12} {ratio:>9.3f} {speed:>9}")
print("Go speed: how many times faster the Go engine is (>1: Go ahead); forward ms is a time, so its speed is torch/Go.")
PYEOF
