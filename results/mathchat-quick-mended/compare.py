"""This run (the calibrated simulator with its own ledger and copying the
numbers it holds, reproduce's default since 2026-12-07) against the same
pipeline without them (../mathchat-quick-sampleprec/fp32/: seed 1, the
same logs, base, RL settings and seeds, commit dbab747). Run from this
folder: python3 compare.py.

Every evaluation both runs made, on the same 500 test problems with the
same user seeds: this run's success minus the other's, for an RL arm the
mean over its 3 RL seeds per problem, the interval a paired percentile
bootstrap over problems (2000 resamples, seed 1). The arms that never
meet the calibrated simulator (base, static, naive, oracle) must come out
identical; the calibrated arm's difference is the mends'. Then the claim
calibrated − naive in each run, from the same per-problem successes."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import by_arm, paired, run_successes  # noqa: E402

RUN = os.environ.get('RUN', here)  # the run folder, to rebuild successes.json from its episodes
new = by_arm(run_successes(RUN))
old = by_arm(run_successes(os.path.join(here, '..', 'mathchat-quick-sampleprec', 'fp32')))
print('| evaluation | without the mends | with them | difference (95% CI) | identical? |')
print('| --- | ---: | ---: | --- | --- |')
for k in sorted(set(new) & set(old)):
    if not k.startswith('eval'):
        continue
    a, b = old[k], new[k]
    m, lo, hi = paired(b, a)
    print(f'| {k} | {sum(a)/len(a):.3f} | {sum(b)/len(b):.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] | {"yes" if a == b else "no"} |')
print()
print('| decoding | calibrated − naive without the mends | with them |')
print('| --- | --- | --- |')
for d, name in (('eval', 'sampled (T = 1)'), ('eval-greedy', 'greedy')):
    cells = []
    for S in (old, new):
        m, lo, hi = paired(S[f'{d}/calibrated-interactive'], S[f'{d}/naive-interactive'])
        cells.append(f'{m:+.3f} [{lo:+.3f}, {hi:+.3f}]')
    print(f'| {name} | {cells[0]} | {cells[1]} |')
