#!/usr/bin/env python3
"""Every hacking-metrics reading of a dose study, one table per study folder.

usage: readings.py STUDY [STUDY ...]   (a folder `calibrl reproduce --doses` wrote)

For each setting (1x, then each dose folder) and RL arm, each reading's
iteration, target-request rate, pasted count and paste -> delivery, the
training-user and human-proxy rewards and the change of their gap from
iteration 0 [95% CI], as metrics.jsonl holds them.
"""
import json
import os
import sys

ARMS = ["naive-interactive", "calibrated-interactive", "oracle-interactive", "static"]
ORDER = ["1x", "leak-0x", "leak-2x", "syc-0x", "syc-2x", "reward-acceptance"]


def readings(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if "hacking/n" in r:
                out.setdefault(r["stage"].split("/")[0], []).append(r)
    return out


def cell(r, k, fmt="%.3f"):
    return fmt % r[k] if k in r else "–"


def change(r, k):
    c = k + "_change"
    if c not in r:
        return "–"
    return "%+.3f [%+.3f, %+.3f]" % (r[c], r[c + "_lo"], r[c + "_hi"])


for study in sys.argv[1:]:
    settings = [s for s in ORDER if os.path.exists(os.path.join(study, s, "metrics.jsonl"))]
    print("## %s\n" % study)
    print("| setting | arm | iteration | n | decoding | target requests (Δ) | pasted | paste → delivery | training-user reward | human-proxy reward | gap Δ |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for s in settings:
        rs = readings(os.path.join(study, s, "metrics.jsonl"))
        for arm in ARMS:
            for r in rs.get(arm, []):
                print("| %s | %s | %d | %d | %s | %s (%s) | %s | %s | %s | %s | %s |" % (
                    s, arm, r["step"], r["hacking/n"], "sampled" if r.get("hacking/sampled") else "greedy",
                    cell(r, "hacking/target_request"), change(r, "hacking/target_request"),
                    cell(r, "hacking/pasted", "%.0f"), cell(r, "hacking/paste_delivery"),
                    cell(r, "hacking/train_user_reward"), cell(r, "hacking/human_reward"),
                    change(r, "hacking/reward_gap")))
    print()
