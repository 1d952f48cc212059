"""This run (the README's main command with --precision bf16, on a CPU with
AMX-BF16) against the same command in fp32 on the same kind of machine
(../mathchat-quick-lanes/: the same code, commit 2ad5315, run the session
before). Run from this folder: python3 compare.py (BF16=the bf16 run
folder and FP32=the fp32 one, while their episodes and metrics are there,
rebuild successes.json and sft-nll.json from them).

First the two verdicts claim by claim (each report's tables); then every
evaluation paired, bf16 minus fp32 on the same problems with the same user
seeds (a paired percentile bootstrap over problems, 2000 resamples, seed
1; an RL arm's per-problem success is the mean over its RL seeds, as the
verdict reads it); then the two SFT stages' validation NLL; then the stage
groups' wall and CPU seconds."""
import json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import by_arm, paired_evaluations, report_verdict, run_successes, stage_groups  # noqa: E402

FP32 = os.path.join(here, '..', 'mathchat-quick-lanes')
BF16 = os.environ.get('BF16', here)
FP32_RUN = os.environ.get('FP32', FP32)


def sft_nll(run, name):
    """The base's and the simulator's validation NLL curves of the run
    called name in sft-nll.json, rebuilt from RUN/metrics.jsonl when it is
    there."""
    path = os.path.join(here, 'sft-nll.json')
    N = json.load(open(path)) if os.path.exists(path) else {}
    metrics = os.path.join(run, 'metrics.jsonl')
    if os.path.exists(metrics):
        curves = {}
        for d in map(json.loads, open(metrics)):
            if d.get('stage') in ('base', 'sim') and 'sft/val_nll' in d:
                curves.setdefault(d['stage'], []).append([d['step'], d['sft/val_nll']])
        N[name] = curves
        json.dump(N, open(path, 'w'), sort_keys=True)
    return N[name]


def main():
    print('| decoding | claim | fp32 | bf16 | same holding? |')
    print('| --- | --- | --- | --- | --- |')
    same, n = 0, 0
    for dec, a, b in zip(('sampled', 'greedy'), report_verdict(FP32), report_verdict(BF16)):
        for claim, (da, ha) in a.items():
            db, hb = b[claim]
            same, n = same + (ha == hb), n + 1
            print(f'| {dec} | {claim} | {da}: {ha} | {db}: {hb} | {"yes" if ha == hb else "**no**"} |')
    print(f'\n{same} of {n} claims hold (or fail) the same way.\n')

    A, B = by_arm(run_successes(FP32_RUN)), by_arm(run_successes(BF16))
    paired_evaluations(A, B, 'fp32', 'bf16', 'bf16')
    print()

    fa, fb = sft_nll(FP32_RUN, 'fp32'), sft_nll(BF16, 'bf16')
    print('| SFT stage | steps | validation NLL fp32 | bf16 |')
    print('| --- | ---: | ---: | ---: |')
    for st in ('base', 'sim'):
        (s, x), (_, y) = fa[st][-1], fb[st][-1]
        print(f'| {st} | {s} | {x:.4f} | {y:.4f} |')

    print('\n| stages | wall s fp32 | wall s bf16 | CPU s fp32 | CPU s bf16 | fp32 ÷ bf16 (CPU) |')
    print('| --- | ---: | ---: | ---: | ---: | ---: |')
    ga, gb = stage_groups(FP32), stage_groups(here)
    for g in ga:
        (aw, ac), (bw, bc) = ga[g], gb.get(g, [0, 0])
        print(f'| {g} | {aw:.0f} | {bw:.0f} | {ac:.0f} | {bc:.0f} | {ac / bc:.2f} |')
    ta, tb = sum(v[1] for v in ga.values()), sum(v[1] for v in gb.values())
    print(f'| all | | | {ta:.0f} | {tb:.0f} | {ta / tb:.2f} |')


if __name__ == '__main__':
    main()
