"""What the results folders' analysis scripts share: each evaluation's
per-problem success, and a paired bootstrap over problems.

successes() reads successes.json (or the path given) in the working folder: for each
evaluation NAME (eval-NAME.json beside it) one character per problem, in
index order, "1" for a success. When eval-NAME.episodes.jsonl files are
there (the run folder, before its episodes were left out of results/) it
first rebuilds successes.json from them. paired(a, b) is a's success minus
b's on the same problems with the same user seeds: the mean and the
percentile interval of `resamples` bootstrap means over problems; a and b
are per-problem successes, as "0"/"1" strings or numbers (a mean over RL
seeds)."""
import filecmp, glob, json, os, random


def successes(path='successes.json'):
    if glob.glob('eval-*.episodes.jsonl'):
        S = {}
        for p in sorted(glob.glob('eval-*.episodes.jsonl')):
            eps = sorted((json.loads(l) for l in open(p)), key=lambda e: e['index'])
            S[p[len('eval-'):-len('.episodes.jsonl')]] = ''.join('1' if e['success'] else '0' for e in eps)
        json.dump(S, open(path, 'w'), indent=0, sort_keys=True)
    return json.load(open(path))


def paired(a, b, resamples=2000, seed=1):
    d = [float(x) - float(y) for x, y in zip(a, b)]
    rng = random.Random(seed)
    n = len(d)
    bs = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    return sum(d) / n, bs[int(0.025 * resamples) - 1], bs[int(0.975 * resamples) - 1]


def rate(s):
    return s.count('1') / len(s)


def _interval(xs, alpha):
    xs = sorted(xs)
    return xs[int(alpha / 2 * len(xs))], xs[int((1 - alpha / 2) * len(xs)) - 1]


def pooled_table(S, arms):
    """Prints, for each ARM and decoding, ARM-sS minus base-sS over the
    pipelines S found in S (evaluations named NAME-sS-TT, T 0 for greedy,
    1 for sampled): per pipeline a paired bootstrap over problems (2,000
    resamples), pooled the mean over pipelines with a two-level bootstrap
    (pipelines with replacement, then problems within each; 4,000
    resamples), one random stream per claim seeded 1, Bonferroni over
    the claims (arms x 2 decodings)."""
    seeds = sorted({int(k.split('-s')[1].split('-')[0]) for k in S if k.startswith('base-s')})
    claims = 2 * len(arms)
    alpha = 0.05 / claims
    print(f'pipelines {seeds}; {alpha*100:.3g}% two-sided per interval (Bonferroni over {claims})')
    print('| arm | decoding | base (per pipeline) | arm (per pipeline) | arm − base per pipeline | pooled arm − base | holds? |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    for arm in arms:
        for T, dec in (('0', 'greedy'), ('1', 'T = 1')):
            names = {s: (f'{arm}-s{s}-T{T}', f'base-s{s}-T{T}') for s in seeds}
            if any(a not in S for a, _ in names.values()):
                continue
            ds = {s: [int(x) - int(y) for x, y in zip(S[a], S[b])] for s, (a, b) in names.items()}
            rng = random.Random(1)
            per = []
            for s in seeds:
                d, n = ds[s], len(ds[s])
                lo, hi = _interval([sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(2000)], alpha)
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
            lo, hi = _interval(pooled, alpha)
            verdict = 'yes' if lo > 0 else ('no: reversed' if hi < 0 else 'no (interval includes 0)')
            rates = lambda i: ' / '.join(f'{rate(S[names[s][i]]):.3f}' for s in seeds)
            print(f'| {arm} | {dec} | {rates(1)} | {rates(0)} | {"; ".join(per)} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] | {verdict} |')


def run_successes(run):
    """A run folder's per-problem successes, by evaluation (its eval*/ and
    fidelity/ episode files' names without the extension, e.g.
    eval/calibrated-interactive/seed-0): one character per problem, in
    index order. Read from RUN/successes.json, which is first rebuilt from
    the episodes when they are there (the run folder before its episodes
    were left out of results/)."""
    path = os.path.join(run, 'successes.json')
    if glob.glob(os.path.join(run, 'eval', '*.episodes.jsonl')):
        S = {}
        for p in sorted(glob.glob(os.path.join(run, 'eval*', '**', '*.episodes.jsonl'), recursive=True) +
                        glob.glob(os.path.join(run, 'fidelity', '**', '*.episodes.jsonl'), recursive=True)):
            eps = sorted((json.loads(l) for l in open(p)), key=lambda e: e['index'])
            S[os.path.relpath(p, run)[:-len('.episodes.jsonl')]] = ''.join('1' if e['success'] else '0' for e in eps)
        json.dump(S, open(path, 'w'), indent=0, sort_keys=True)
    return json.load(open(path))


def print_identity(old, run, old_name, files, here):
    """Prints whether every evaluation and sim-to-real play of run succeeds
    on the same problems as old's (run_successes), then whether each
    (name, folder) of files is byte-identical to run's file of that name
    (folders named relative to here)."""
    a, b = run_successes(old), run_successes(run)
    same = [k for k in a if b.get(k) == a[k]]
    differ = [k for k in a if k in b and b[k] != a[k]]
    missing = sorted(set(a) ^ set(b))
    print(f'{len(same)} of {len(a)} evaluations and sim-to-real plays succeed on exactly the same problems as {old_name}\'s; '
          f'{len(differ)} differ; {len(missing)} in one run only.\n')
    for k in differ:
        print(f'- {k}: differs')
    for name, folder in files:
        ok = filecmp.cmp(os.path.join(folder, name), os.path.join(run, name), shallow=False)
        print(f'- {name}: {"byte-identical" if ok else "**differs**"} against {os.path.relpath(folder, here)}/{name}')


def print_stage_table(cols):
    """Prints the stage groups' wall and CPU seconds of each (name,
    stage_groups) in cols side by side, and each column's CPU total."""
    print('| stages | ' + ' | '.join(f'wall s {n}' for n, _ in cols) + ' | ' + ' | '.join(f'CPU s {n}' for n, _ in cols) + ' |')
    print('| --- |' + ' ---: |' * (2 * len(cols)))
    for g in cols[0][1]:
        print(f'| {g} | ' + ' | '.join(f'{G.get(g, [0, 0])[0]:.0f}' for _, G in cols) + ' | ' + ' | '.join(f'{G.get(g, [0, 0])[1]:.0f}' for _, G in cols) + ' |')
    print('| all | ' + ' | ' * (len(cols) - 1) + ' | ' + ' | '.join(f'{sum(v[1] for v in G.values()):.0f}' for _, G in cols) + ' |')


def print_run_against(here, old_folder, old_name, new_name):
    """A timed rerun's check against an earlier run of the same command
    (old_folder, relative to here, by commit old_name): whether every
    evaluation and sim-to-real play succeeds on the same problems and the
    summaries and report are byte-identical (print_identity), then the
    stage groups' wall and CPU seconds side by side. The run is here, or
    the folder RUN names while its episodes are there (successes.json is
    then rebuilt from them)."""
    old = os.path.join(here, old_folder)
    run = os.environ.get('RUN', here)
    print_identity(old, run, old_name, [(name, old) for name in ('summary.json', 'summary-greedy.json', 'report.md')], here)
    print('\nStage groups, wall and CPU seconds (stages.json; stages side by side count twice):\n')
    print_stage_table([(old_name, stage_groups(old)), (new_name, stage_groups(run))])


def stage_kind(stage):
    """The stage profile's groups: each SFT, RL by partner, evaluations, fidelity."""
    if stage in ('sim', 'base'):
        return 'SFT ' + stage
    if stage.startswith(('eval/', 'eval-greedy/')):
        return 'evaluations (sampled and greedy)'
    if stage.startswith('fidelity/'):
        return 'fidelity and sim-to-real gaps'
    if '/seed-' in stage:
        return 'RL ' + stage.split('/')[0]
    return 'collect, tokenizer, report'


def stage_groups(run):
    """A run folder's stages.json summed by stage_kind: kind -> [wall s, CPU s],
    in the order the kinds first end."""
    G = {}
    for st in json.load(open(os.path.join(run, 'stages.json'))):
        g = G.setdefault(stage_kind(st['stage']), [0.0, 0.0])
        g[0] += st['wall_s']
        g[1] += st['cpu_s']
    return G


def by_arm(S):
    """run_successes' evaluations without their RL seed -> per-problem
    success averaged over the seeds, as a report's verdict reads it."""
    G = {}
    for name, s in S.items():
        key = name.rsplit('/seed-', 1)[0] if '/seed-' in name else name
        G.setdefault(key, []).append([int(c) for c in s])
    return {k: [sum(col) / len(v) for col in zip(*v)] for k, v in G.items()}


def paired_evaluations(A, B, a_name, b_name, b_column, last_column='includes 0?'):
    """Prints every evaluation found in both A and B (by_arm's per-problem
    successes of two runs of one pipeline) paired, B minus A on the same
    problems with the same user seeds, then how many intervals include 0.
    b_column heads B's column; a run that played another number of
    problems stops the script."""
    print(f'| evaluation | problems | {a_name} | {b_column} | {b_name} − {a_name} (95% CI) | {last_column} |')
    print('| --- | ---: | ---: | ---: | --- | --- |')
    within = 0
    keys = sorted(set(A) & set(B))
    for k in keys:
        a, b = A[k], B[k]
        if len(a) != len(b):
            raise SystemExit(f'{k}: {len(a)} problems in {a_name}, {len(b)} in {b_name}')
        m, lo, hi = paired(b, a)
        ok = lo <= 0 <= hi
        within += ok
        print(f'| {k} | {len(a)} | {sum(a)/len(a):.3f} | {sum(b)/len(b):.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] | {"yes" if ok else "no"} |')
    print(f'\n{within} of {len(keys)} intervals include 0.')


def report_verdict(folder):
    """The report's two verdict tables (sampled, greedy): claim -> (difference cell, holds cell)."""
    text = open(os.path.join(folder, 'report.md')).read()
    text = text[text.index('## Verdict'):]
    tables, rows = [], None
    for line in text.splitlines():
        if line.startswith('| claim |'):
            rows = {}
        elif rows is not None and line.startswith('| ') and not line.startswith('| ---'):
            cells = [c.strip() for c in line.strip('|').split('|')]
            rows[cells[0]] = (cells[3], cells[5])
        elif rows is not None and not line.startswith('|'):
            tables.append(rows)
            rows = None
            if len(tables) == 2:
                break
    return tables


if __name__ == '__main__':
    # python3 ../pairing.py OLD_FOLDER OLD_NAME NEW_NAME, from a timed
    # rerun's folder: print_run_against for that folder, no script of its own.
    import sys
    if len(sys.argv) != 4:
        sys.exit('usage: python3 ../pairing.py OLD_FOLDER OLD_NAME NEW_NAME (from the rerun\'s folder; RUN=run folder to rebuild successes.json)')
    print_run_against(os.getcwd(), sys.argv[1], sys.argv[2], sys.argv[3])
