"""Pools the cosine study over pipelines: for each arm and decoding, the
arm minus its pipeline's base on the same 500 test problems with the same
user seeds, per pipeline (a paired bootstrap over problems) and pooled
(the mean over pipelines; a two-level bootstrap: pipelines with
replacement, then problems within each; 4,000 resamples, seed 1).
Bonferroni over the 4 claims (2 arms x 2 decodings): 98.75% intervals.
successes.json holds each evaluation's per-problem success (one character
per problem, in index order); it is rebuilt from eval-*.episodes.jsonl
when those exist in the working folder."""
import random
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import paired, rate, successes  # noqa: E402

S = successes()
seeds = sorted({int(k.split('-s')[1].split('-')[0]) for k in S if k.startswith('base-s')})
ALPHA = 0.05 / 4

def q(xs, a):
    xs = sorted(xs)
    return xs[int(a / 2 * len(xs))], xs[int((1 - a / 2) * len(xs)) - 1]

def diffs(arm, s, T):
    a, b = S.get(f'{arm}-cosine-s{s}-T{T}'), S[f'base-s{s}-T{T}']
    return None if a is None else [int(x) - int(y) for x, y in zip(a, b)]

print(f'pipelines {seeds}; {ALPHA*100:.3g}% two-sided per interval (Bonferroni over 4)')
print('| arm | decoding | base (per pipeline) | arm (per pipeline) | arm − base per pipeline | pooled arm − base | holds? |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for arm in ('oracle', 'calibrated'):
    for T, dec in (('0', 'greedy'), ('1', 'T = 1')):
        ds = {s: diffs(arm, s, T) for s in seeds}
        if any(d is None for d in ds.values()):
            continue
        rng = random.Random(1)
        per = []
        for s in seeds:
            d, n = ds[s], len(ds[s])
            bs = [sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(2000)]
            lo, hi = q(bs, ALPHA)
            per.append(f'{sum(d)/n:+.3f} [{lo:+.3f}, {hi:+.3f}]')
        pooled = []
        for _ in range(4000):
            tot = 0
            for _ in seeds:
                d = ds[rng.choice(seeds)]
                n = len(d)
                tot += sum(d[rng.randrange(n)] for _ in range(n)) / n
            pooled.append(tot / len(seeds))
        m = sum(sum(d) / len(d) for d in ds.values()) / len(seeds)
        lo, hi = q(pooled, ALPHA)
        rate = lambda k: ' / '.join(f"{S[k.format(s=s)].count('1')/len(S[k.format(s=s)]):.3f}" for s in seeds)
        verdict = 'yes' if lo > 0 else ('no: reversed' if hi < 0 else 'no (interval includes 0)')
        print(f'| {arm} cosine | {dec} | {rate("base-s{s}-T" + T)} | {rate(arm + "-cosine-s{s}-T" + T)} | {"; ".join(per)} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] | {verdict} |')
