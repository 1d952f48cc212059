"""Paired differences of the static learning-rate study: each policy minus
the base and minus the same reward at the preset's rate (6e-5), on the
same 500 validation problems (indices 20000-20499) with the same user
seeds; 2,000 bootstrap resamples over problems (seed 1), 95% percentile
intervals, uncorrected. successes.json holds each evaluation's per-problem
success (one character per problem, in index order); run in the study's
folder, it is first rebuilt from the eval-*.episodes.jsonl files there
when they exist. The training columns come from NAME.metrics.jsonl (the
last record of each iteration, since a resumed run logs again the
iterations after its checkpoint)."""
import json, statistics
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import paired, rate, successes  # noqa: E402

S = successes()
diff = paired

def training(name):
    its = {}
    if not os.path.exists(name + '.metrics.jsonl'):
        return ''
    for l in open(name + '.metrics.jsonl'):
        r = json.loads(l)
        if 'train/grad_tokens' in r:
            its[r['step']] = r
    g = [r['train/grad_tokens'] for r in its.values()]
    kl = [r['loss/kl'] for r in its.values() if 'loss/kl' in r]
    return f'{statistics.mean(g):,.0f} ± {statistics.pstdev(g):,.0f} | {kl[-1] if kl else float("nan"):.4f} |'

print('| reward | learning rate | decoding | success | − base (95% CI) | − same reward at 6e-5 (95% CI) | gradient tokens per iteration | KL at the last iteration |')
print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for T, dec in (('0', 'greedy'), ('1', 'T = 1')):
    base = S.get(f'base-T{T}')
    if base is None:
        continue
    print(f'| base | | {dec} | {base.count("1")/len(base):.3f} | | | | |')
    for reward in ('outcome', 'continuation'):
        ref = S.get(f'{reward}-lr6e-5-T{T}')
        for lr in ('2e-5', '6e-5', '1.8e-4'):
            a = S.get(f'{reward}-lr{lr}-T{T}')
            if a is None:
                continue
            m, lo, hi = diff(a, base)
            row = f'| {reward} | {lr} | {dec} | {a.count("1")/len(a):.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |'
            if ref is not None and lr != '6e-5':
                m, lo, hi = diff(a, ref)
                row += f' {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |'
            else:
                row += ' |'
            print(row + ' ' + training(f'{reward}-lr{lr}'))
