#!/usr/bin/env python3
"""The quick run's fp32 floor: what its two SFT fits would cost at the
machine's measured fp32 product rate, with everything but the products
free, against the 15 minutes issue 45 asks for.

Reads, from this folder:
  work.txt         the WORK lines count.patch prints (one per SFT fit:
                   model shape, budget, and the training and validation
                   sequences' counts, tokens, causal query-key pairs and
                   trained positions)
  gemm-core.txt    go test ./gemm -bench SgemmCore output (GFLOP per
                   CPU-second of each kernel at each of the engine's shapes)
  time-*.txt       /usr/bin/time -v of whole runs
and ../mathchat-quick-maskedhead/stages.json, the stage profile of the
fp32 run timed in time-988bede-fp32.txt.

Writes floor.md to stdout. Counting (per token unless said):
  weight products  forward 2·P, input and weight gradients 2·P each:
                   6·P, P = 12·d²·L (qkv 3d², projection d², MLP 8d²)
  head             6·d·V on the trained (marked) positions only, as the
                   engine runs it (lm.ForwardMaskedAt)
  attention        per causal query-key pair and layer: QKᵀ and PV
                   forward 4·d, backward (dP, dV, dQ, dK) 8·d: 12·d·L
  validation       the forward of the validation set (2·P per token,
                   2·d·V per marked position, 4·d·L per pair) at step 0
                   and every eval_every steps
Norms, GELU, softmax, the optimizer, packing and the embedding are left
out: the floor is lower than any real step.
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def work():
    fits = []
    for line in (HERE / "work.txt").read_text().splitlines():
        if line.startswith("WORK "):
            fits.append({k: int(v) for k, v in (kv.split("=") for kv in line[5:].split())})
    if len(fits) != 2:
        sys.exit(f"work.txt: want the two SFT fits' WORK lines, got {len(fits)}")
    return fits


def peak():
    """The fastest fp32 kernel's best rate at any of config A's shapes."""
    best, name = 0.0, ""
    for line in (HERE / "gemm-core.txt").read_text().splitlines():
        m = re.match(r"BenchmarkSgemmCore/(\S+?)/(A/\S+)\s+\d+\s+\d+ ns/op\s+([\d.]+) GFLOP/s-cpu", line)
        if m and float(m.group(3)) > best:
            best, name = float(m.group(3)), f"{m.group(1)} {m.group(2)}"
    if best == 0:
        sys.exit("gemm-core.txt: no BenchmarkSgemmCore line for config A")
    return best, name


def timed(path):
    text = (HERE / path).read_text()
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    return user + sys_, secs


def flops(f):
    d, L, V = f["dim"], f["layers"], f["vocab"]
    P = 12 * d * d * L
    steps, B = f["steps"], f["batch"]
    n = f["train_seqs"]
    # Each step's batch: B sequences of an epoch's permutation, so the
    # steps' mean is the training set's.
    per_seq = {k: f[f"train_{k}"] / n for k in ("tokens", "tri", "marked")}
    seqs = steps * B
    train = {
        "weight products": seqs * per_seq["tokens"] * 6 * P,
        "head (marked rows)": seqs * per_seq["marked"] * 6 * d * V,
        "attention": seqs * per_seq["tri"] * 12 * d * L,
    }
    evals = steps // f["eval_every"] + 1
    train["validation forward"] = evals * (f["val_tokens"] * 2 * P + f["val_marked"] * 2 * d * V + f["val_tri"] * 4 * d * L)
    return train, per_seq


def main():
    fits = work()
    rate, kernel = peak()
    stages = {s["stage"]: s for s in json.loads((HERE / "../mathchat-quick-maskedhead/stages.json").read_text())}
    run_cpu, run_wall = timed("time-988bede-fp32.txt")
    out = []
    p = out.append
    p("# The quick run's fp32 floor (from `python3 floor.py`)\n")
    p(f"Peak: {rate:.1f} GFLOP per CPU-second, the fastest fp32 kernel at any of config A's shapes ({kernel}), one core.\n")
    p("| fit | steps × batch | tokens / seq | pairs / seq | trained / seq | weight products TFLOP | head | attention | validation | total TFLOP | CPU s at peak | CPU s measured | measured / floor |")
    p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    floor_sft = meas_sft = 0.0
    for f in sorted(fits, key=lambda f: -f["steps"]):
        name = "base" if f["steps"] == 3000 else "sim"
        parts, per = flops(f)
        total = sum(parts.values())
        at_peak = total / (rate * 1e9)
        meas = stages[name]["cpu_s"]
        floor_sft += at_peak
        meas_sft += meas
        p(f"| {name} | {f['steps']} × {f['batch']} | {per['tokens']:.1f} | {per['tri']:.0f} | {per['marked']:.1f} | "
          + " | ".join(f"{v / 1e12:.2f}" for v in parts.values())
          + f" | {total / 1e12:.2f} | {at_peak:.0f} | {meas:.0f} | {meas / at_peak:.2f}× |")
    rest = run_cpu - meas_sft
    budget = 15 * 60 * 2
    p("")
    p(f"- The fp32 run (988bede, `../mathchat-quick-maskedhead/`): {run_wall / 60:.1f} min wall, {run_cpu:.0f} CPU s; its two SFT fits {meas_sft:.0f} CPU s, every other stage {rest:.0f}.")
    p(f"- 15 minutes on 2 cores is at most {budget} CPU s. The two fits at the floor take {floor_sft:.0f} ({floor_sft / budget:.0%} of it).")
    p(f"- With the fits at their floor and every other stage as measured: {floor_sft + rest:.0f} CPU s, at least {(floor_sft + rest) / 2 / 60:.1f} min on 2 cores.")
    p(f"- For 15 minutes with the fits at their floor, every other stage would have to cost {budget - floor_sft:.0f} CPU s, {rest / (budget - floor_sft):.2f}× less than now.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
