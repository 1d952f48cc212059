"""Paired differences of the learning-rate schedule lever: each policy
minus the base, and the cosine run minus the constant-rate run of the same
RL seed, on the same 500 validation problems with the same user seeds;
2,000 bootstrap resamples over problems (seed 1), 95% percentile
intervals, uncorrected. successes.json (one character per problem, in
index order) is rebuilt from eval-*.episodes.jsonl when they exist here."""
import glob, json, random

if glob.glob('eval-*.episodes.jsonl'):
    S = {}
    for p in sorted(glob.glob('eval-*.episodes.jsonl')):
        eps = sorted((json.loads(l) for l in open(p)), key=lambda e: e['index'])
        S[p[len('eval-'):-len('.episodes.jsonl')]] = ''.join('1' if e['success'] else '0' for e in eps)
    json.dump(S, open('successes.json', 'w'), indent=0, sort_keys=True)
S = json.load(open('successes.json'))

def diff(a, b):
    d = [int(x) - int(y) for x, y in zip(a, b)]
    rng = random.Random(1)
    n = len(d)
    bs = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(2000))
    return f'{sum(d)/n:+.3f} [{bs[49]:+.3f}, {bs[1949]:+.3f}]'

rate = lambda s: f"{s.count('1')/len(s):.3f}"
print('| RL seed | decoding | base | constant | constant − base | cosine | cosine − base | cosine − constant |')
print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for T, dec in (('0', 'greedy'), ('1', 'T = 1')):
    b = S[f'base-T{T}']
    for seed, d, c in (('2', 'default', 'cosine'), ('3', 'default-s3', 'cosine-s3')):
        a, x = S.get(f'{d}-T{T}'), S.get(f'{c}-T{T}')
        if a is None or x is None:
            continue
        print(f'| {seed} | {dec} | {rate(b)} | {rate(a)} | {diff(a, b)} | {rate(x)} | {diff(x, b)} | {diff(x, a)} |')
