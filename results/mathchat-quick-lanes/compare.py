"""This run (commit 2ad5315: the sampler's lanes, its top-p cut and the
copy rule's sorted ids, none of which may change a bit) against the same
command on commit 4a871b7 (../mathchat-quick-ragged/: its successes and
summaries are that folder's, which 4a871b7 reproduced exactly). Run from
this folder: python3 compare.py (RUN=the run folder, while its episodes
are there, rebuilds successes.json from them).

First whether every evaluation and sim-to-real conversation succeeded on
the same problems and the summaries and report are byte-identical; then
the stage groups' wall and CPU seconds of 4a871b7's run, 97f547c's (the
same code as this one, run earlier the same day) and this run's. The
8f05f75 binary writes no stage profile."""
import filecmp, json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import run_successes, stage_groups  # noqa: E402

OLD = os.path.join(here, '..', 'mathchat-quick-ragged')
RUN = os.environ.get('RUN', here)  # the run folder, for the episodes


def main():
    a, b = run_successes(OLD), run_successes(RUN)
    same = [k for k in a if b.get(k) == a[k]]
    differ = [k for k in a if k in b and b[k] != a[k]]
    missing = sorted(set(a) ^ set(b))
    print(f'{len(same)} of {len(a)} evaluations and sim-to-real plays succeed on exactly the same problems as 4a871b7\'s; '
          f'{len(differ)} differ; {len(missing)} in one run only.\n')
    for k in differ:
        print(f'- {k}: differs')
    # 4a871b7's report differs from e5c8f3c's (the folder's) in the command it suggests
    for name, old in (('summary.json', OLD), ('summary-greedy.json', OLD), ('report.md', os.path.join(OLD, '4a871b7'))):
        ok = filecmp.cmp(os.path.join(old, name), os.path.join(RUN, name), shallow=False)
        print(f'- {name}: {"byte-identical" if ok else "**differs**"} against {os.path.relpath(old, here)}/{name}')

    print('\nStage groups, wall and CPU seconds (stages.json; stages side by side count twice):\n')
    cols = [('4a871b7', stage_groups(os.path.join(OLD, '4a871b7'))),
            ('97f547c', stage_groups(os.path.join(here, '97f547c'))), ('2ad5315', stage_groups(here))]
    print('| stages | ' + ' | '.join(f'wall s {n}' for n, _ in cols) + ' | ' + ' | '.join(f'CPU s {n}' for n, _ in cols) + ' |')
    print('| --- |' + ' ---: |' * (2 * len(cols)))
    for g in cols[0][1]:
        print(f'| {g} | ' + ' | '.join(f'{G.get(g, [0, 0])[0]:.0f}' for _, G in cols) + ' | ' + ' | '.join(f'{G.get(g, [0, 0])[1]:.0f}' for _, G in cols) + ' |')
    print('| all | ' + ' | ' * (len(cols) - 1) + ' | ' + ' | '.join(f'{sum(v[1] for v in G.values()):.0f}' for _, G in cols) + ' |')


if __name__ == '__main__':
    main()
