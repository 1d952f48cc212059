"""What the results folders' analysis scripts share: each evaluation's
per-problem success, and a paired bootstrap over problems.

successes() reads successes.json in the working folder: for each
evaluation NAME (eval-NAME.json beside it) one character per problem, in
index order, "1" for a success. When eval-NAME.episodes.jsonl files are
there (the run folder, before its episodes were left out of results/) it
first rebuilds successes.json from them. paired(a, b) is a's success minus
b's on the same problems with the same user seeds: the mean and the
percentile interval of `resamples` bootstrap means over problems."""
import glob, json, random


def successes():
    if glob.glob('eval-*.episodes.jsonl'):
        S = {}
        for p in sorted(glob.glob('eval-*.episodes.jsonl')):
            eps = sorted((json.loads(l) for l in open(p)), key=lambda e: e['index'])
            S[p[len('eval-'):-len('.episodes.jsonl')]] = ''.join('1' if e['success'] else '0' for e in eps)
        json.dump(S, open('successes.json', 'w'), indent=0, sort_keys=True)
    return json.load(open('successes.json'))


def paired(a, b, resamples=2000, seed=1):
    d = [int(x) - int(y) for x, y in zip(a, b)]
    rng = random.Random(seed)
    n = len(d)
    bs = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return sum(d) / n, bs[int(0.025 * resamples) - 1], bs[int(0.975 * resamples) - 1]


def rate(s):
    return s.count('1') / len(s)
