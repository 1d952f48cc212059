"""Paired differences of the RL settings study: each setting's policy minus
the base, and minus the default setting, on the same 500 validation
problems (indices 20000-20499) with the same user seeds; 2,000 bootstrap
resamples over problems (seed 1), 95% percentile intervals, uncorrected.
successes.json holds each evaluation's per-problem success (one character
per problem, in index order), taken from the episodes the run scripts
wrote."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import paired, rate, successes  # noqa: E402

S = successes()
diff = paired

settings = ['default', 'beta0', 'beta01', 'temp07', 'group16', 'inst16', 'seqmean', 'temp07t', 'temp05t', 'inst32', 'inst64']
print('| setting | decoding | success | − base (95% CI) | − default (95% CI) |')
print('| --- | --- | --- | --- | --- |')
for T in ('0', '1', '0.7', '0.5'):
    base = S.get(f'base-T{T}')
    if base is None:
        continue
    print(f'| base | T = {T} | {base.count("1")/len(base):.3f} | | |')
    dflt = S.get(f'default-T{T}')
    for s in settings:
        a = S.get(f'{s}-T{T}')
        if a is None:
            continue
        m, lo, hi = diff(a, base)
        row = f'| {s} | T = {T} | {a.count("1")/len(a):.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |'
        if dflt is not None and s != 'default':
            m, lo, hi = diff(a, dflt)
            row += f' {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |'
        else:
            row += ' |'
        print(row)
