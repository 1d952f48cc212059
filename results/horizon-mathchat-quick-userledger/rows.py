#!/usr/bin/env python3
"""The calibrated arm without and with the simulator's ledger, per H.

usage: rows.py WITHOUT/result.json WITH/result.json
(single-seed horizon studies' result.json: seed-1 of the two-seed study,
and this folder's). Prints the README's table rows: the oracle's success,
the calibrated arm's without and with, its gap to the oracle [95% CI] and
the bound from its measured δ_t, sampled."""
import json
import sys


def success(res, h, arm):
    for r in res["rows"].get(str(h), []):
        if r["arm"] == arm:
            return r["success"]
    return None


def check(res, h):
    for c in res["bound_checks"]:
        if c["h"] == h and c["arm"] == "calibrated-interactive" and c["decoding"] == "sampled":
            return c
    return None


wo, wi = (json.load(open(p)) for p in sys.argv[1:3])
for h in wo["horizons"]:
    a, b = check(wo, h), check(wi, h)
    if a is None or b is None:
        print("| %d | %.3f | %.3f | not yet run | – | – |" % (h, success(wo, h, "oracle-interactive"), success(wo, h, "calibrated-interactive")))
        continue
    print("| %d | %.3f | %.3f | %.3f | %+.3f → %+.3f [%+.3f, %+.3f] | %.3f → %.3f |" % (
        h, success(wi, h, "oracle-interactive"), success(wo, h, "calibrated-interactive"), success(wi, h, "calibrated-interactive"),
        a["gap"], b["gap"], b["gap_ci95"][0], b["gap_ci95"][1], a["bound"], b["bound"]))
