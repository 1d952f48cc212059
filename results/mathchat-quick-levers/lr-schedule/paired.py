"""Paired differences of the learning-rate schedule lever: each policy
minus the base, and the cosine run minus the constant-rate run of the same
RL seed, on the same 500 validation problems with the same user seeds;
2,000 bootstrap resamples over problems (seed 1), 95% percentile
intervals, uncorrected. successes.json (one character per problem, in
index order) is rebuilt from eval-*.episodes.jsonl when they exist here."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../..'))
from pairing import paired, rate, successes  # noqa: E402

S = successes()


def diff(a, b):
    m, lo, hi = paired(a, b)
    return f'{m:+.3f} [{lo:+.3f}, {hi:+.3f}]'

print('| RL seed | decoding | base | constant | constant − base | cosine | cosine − base | cosine − constant |')
print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for T, dec in (('0', 'greedy'), ('1', 'T = 1')):
    b = S[f'base-T{T}']
    for seed, d, c in (('2', 'default', 'cosine'), ('3', 'default-s3', 'cosine-s3')):
        a, x = S.get(f'{d}-T{T}'), S.get(f'{c}-T{T}')
        if a is None or x is None:
            continue
        print(f'| {seed} | {dec} | {rate(b):.3f} | {rate(a):.3f} | {diff(a, b)} | {rate(x):.3f} | {diff(x, b)} | {diff(x, a)} |')
