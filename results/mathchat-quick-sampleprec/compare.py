"""Every evaluation of the fp32 run (fp32/) against the same evaluation of
the run that samples in bf16 (sbf16/): the same pipeline, seed 1, only
--sample-precision differs. Run from this folder: python3 compare.py.

Each run folder's per-problem successes are read from successes.json,
rebuilt from the run's eval*/ and fidelity/ episodes when they are there
(the run folder before its episodes were left out of results/). A
difference is sbf16 minus fp32 on the same problems with the same user
seeds, its interval a paired percentile bootstrap over problems (2000
resamples, seed 1); for an RL arm the per-problem success is the mean over
its RL seeds, as the report's verdict reads it."""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import by_arm, paired_evaluations, run_successes, stage_groups  # noqa: E402

RUNS = ('fp32', 'sbf16')


def main():
    A, B = (by_arm(run_successes(r)) for r in RUNS)
    paired_evaluations(A, B, 'fp32', 'bf16', 'bf16 sampling', 'within?')
    stages()
    phases()


def stages():
    """Wall and CPU seconds per group of stages (stages.json; two stages run side by side)."""
    W = {}
    for i, r in enumerate(RUNS):
        for k, (wall, cpu) in stage_groups(r).items():
            w = W.setdefault(k, [0.0] * 4)
            w[2 * i] += wall
            w[2 * i + 1] += cpu
    print('\n| stages | wall s fp32 | wall s bf16 sampling | fp32 ÷ bf16 | CPU s fp32 | CPU s bf16 sampling |')
    print('| --- | ---: | ---: | ---: | ---: | ---: |')
    for k, (aw, ac, bw, bc) in W.items():
        print(f'| {k} | {aw:.0f} | {bw:.0f} | {aw / bw:.2f} | {ac:.0f} | {bc:.0f} |')


def phases():
    """Each RL arm's mean seconds per iteration in its phases (metrics.jsonl perf/*)."""
    keys = ('perf/iter_s', 'perf/rollout_s', 'perf/logprob_s', 'perf/update_s')
    print('\n| RL arm | iteration s fp32 / bf16 | rollout s | log-prob s | update s |')
    print('| --- | --- | --- | --- | --- |')
    for arm in ('static', 'naive-interactive', 'calibrated-interactive', 'oracle-interactive'):
        cols = []
        for r in RUNS:
            rows = [d for d in map(json.loads, open(os.path.join(r, 'metrics.jsonl')))
                    if d.get('stage', '').startswith(arm + '/seed-') and 'perf/iter_s' in d]
            cols.append([sum(d[k] for d in rows) / len(rows) for k in keys])
        print(f'| {arm} | ' + ' | '.join(f'{a:.2f} / {b:.2f}' for a, b in zip(*cols)) + ' |')


if __name__ == '__main__':
    main()
