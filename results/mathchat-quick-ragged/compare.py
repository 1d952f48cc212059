"""This run (commit e5c8f3c: a batch's padding no longer computed, the
same arithmetic summed in another order) against the same command on
commit ac27023 (../mathchat-quick-mended/: seed 1, the same logs, RL
settings, seeds and simulator recipe). Run from this folder:
python3 compare.py.

First the verdict of each run as its report.md states it (paired
bootstrap over problems, 2000 resamples), claim by claim; then every
evaluation both runs made, this run's success minus the other's, per
problem (an RL arm's mean over its 3 seeds), with a paired percentile
bootstrap over problems (2000 resamples, seed 1)."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import by_arm, paired, report_verdict, run_successes, stage_groups  # noqa: E402

OLD = os.path.join(here, '..', 'mathchat-quick-mended')
FIRST = os.path.join(here, '8f05f75')  # the timing's reference binary, same command


def short(holds):
    return holds.split(' (')[0]


def main():
    first, old, new = report_verdict(FIRST), report_verdict(OLD), report_verdict(here)
    changed, changed1 = 0, 0
    print('| decoding | claim | 8f05f75 | ac27023 (padding computed) | e5c8f3c (padding skipped) | same holding as ac27023? | as 8f05f75? |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    for dec, f, o, n in zip(('sampled', 'greedy'), first, old, new):
        for claim in n:
            fd, fh = f[claim]
            od, oh = o[claim]
            nd, nh = n[claim]
            same, same1 = short(oh) == short(nh), short(fh) == short(nh)
            changed, changed1 = changed + (not same), changed1 + (not same1)
            print(f'| {dec} | {claim} | {fd} {short(fh)} | {od} {short(oh)} | {nd} {short(nh)} | {"yes" if same else "**no**"} | {"yes" if same1 else "**no**"} |')
    n = sum(len(t) for t in new)
    print(f'\n{changed} of {n} claims change holding against ac27023, {changed1} of {n} against 8f05f75.\n')

    a, b = by_arm(run_successes(OLD)), by_arm(run_successes(os.environ.get('RUN', here)))
    print('| evaluation | ac27023 | e5c8f3c | difference (95% CI) |')
    print('| --- | ---: | ---: | --- |')
    for k in sorted(set(a) & set(b)):
        if not k.startswith('eval'):
            continue
        m, lo, hi = paired(b[k], a[k])
        print(f'| {k} | {sum(a[k]) / len(a[k]):.3f} | {sum(b[k]) / len(b[k]):.3f} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |')

    print('\nStage groups, wall and CPU seconds (stages.json; stages side by side count twice), against the same command on dbab747 (quiet, before the mends):\n')
    a = stage_groups(os.path.join(here, '..', 'mathchat-quick-sampleprec', 'fp32'))
    b = stage_groups(here)
    print('| stages | wall s dbab747 | wall s e5c8f3c | CPU s dbab747 | CPU s e5c8f3c |')
    print('| --- | ---: | ---: | ---: | ---: |')
    for g in a:
        print(f'| {g} | {a[g][0]:.0f} | {b[g][0]:.0f} | {a[g][1]:.0f} | {b[g][1]:.0f} |')
    print(f'| all | | | {sum(v[1] for v in a.values()):.0f} | {sum(v[1] for v in b.values()):.0f} |')


if __name__ == '__main__':
    main()
