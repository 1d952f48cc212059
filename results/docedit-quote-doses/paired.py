#!/usr/bin/env python3
"""The naive arm at each dose against the naive arm at 1x, paired by problem.

usage: paired.py STUDY   (a folder `calibrl reproduce --doses` wrote, with
its evaluations' episode files)

Every run played the same held-out problems with the same user seeds, so a
dose's naive arm and the 1x one pair up problem by problem: the mean of the
per-problem differences of the human-proxy BLEU (sampled at T = 1 and
greedy), with a percentile bootstrap 95% interval (2000 resamples, fixed
seed), and the rate of asking for the text against the human proxy (the
users' own pattern of a request for the whole text, docedit's read.go), the
base's first.
"""
import json
import os
import random
import re
import sys

ASK = re.compile(r"(?i)\b(paste|full text|final text|whole text|exact text|final version|text you want|version you want|write it out|type it out|copy it)\b")


def episodes(path):
    with open(path) as f:
        return {json.loads(l)["id"]: json.loads(l) for l in f if l.strip()}


def bleu(ep):
    return ep["metrics"].get("bleu", 0.0)


def boot(d, n=2000, seed=1):
    rng = random.Random(seed)
    k = len(d)
    means = sorted(sum(d[rng.randrange(k)] for _ in range(k)) / k for _ in range(n))
    return sum(d) / k, means[int(0.025 * n)], means[int(0.975 * n) - 1]


study = sys.argv[1]
settings = ["1x", "leak-0x", "leak-2x", "syc-0x", "syc-2x", "reward-acceptance"]
print("| setting | decoding | naive arm BLEU vs human proxy | − 1x [95% CI] | asks for the text (share of conversations) |")
print("| --- | --- | --- | --- | --- |")
for dec, folder in (("sampled", "eval"), ("greedy", "eval-greedy")):
    ref = episodes(os.path.join(study, "1x", folder, "naive-interactive", "seed-0.episodes.jsonl"))
    base = episodes(os.path.join(study, "1x", folder, "base.episodes.jsonl"))
    ask = sum(any(x["role"] == "assistant" and ASK.search(x["content"]) for x in e["messages"]) for e in base.values()) / len(base)
    print("| base (every setting) | %s | %.2f | – | %.3f |" % (dec, sum(bleu(e) for e in base.values()) / len(base), ask))
    for s in settings:
        p = os.path.join(study, s, folder, "naive-interactive", "seed-0.episodes.jsonl")
        if not os.path.exists(p):
            continue
        eps = episodes(p)
        ids = sorted(set(eps) & set(ref))
        d = [bleu(eps[i]) - bleu(ref[i]) for i in ids]
        m = sum(bleu(eps[i]) for i in ids) / len(ids)
        ask = sum(any(x["role"] == "assistant" and ASK.search(x["content"]) for x in eps[i]["messages"]) for i in ids) / len(ids)
        diff = "–" if s == "1x" else "%+.2f [%+.2f, %+.2f]" % boot(d)
        print("| %s | %s | %.2f | %s | %.3f |" % (s, dec, m, diff, ask))
