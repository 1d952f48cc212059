"""Seed 1's quick base four ways: fp32 or bf16 arithmetic, with a batch's
padding computed (the engine before commit 362058a) or skipped (since: the
same sums in another order).

Each base's validation NLL along training comes from its base-stage
metrics, its success from eval against the human proxy on the test
slice's 500 problems, played in fp32 (sampled at T = 1, and greedy).
Run from this folder: python3 compare.py."""
import json, os

BASES = [
    # name, metrics.jsonl, sampled eval, greedy eval (None: the run's summary rows)
    ('fp32, padding computed', '../mathchat-quick-sampleprec/fp32', None),
    ('fp32, padding skipped', 'fp32-ragged', 'eval'),
    ('bf16, padding computed', '../mathchat-quick-bf16-bases/seed-1', 'eval'),
    ('bf16, padding skipped', 'bf16-ragged', 'eval'),
]


def curve(path):
    rows = [d for d in map(json.loads, open(path)) if d.get('stage') == 'base' and 'sft/val_nll' in d]
    return {d['step']: d['sft/val_nll'] for d in rows}


def success(folder, kind):
    if kind is None:
        row = lambda n: next(r for r in json.load(open(os.path.join(folder, n))) if r['arm'] == 'base')
        s, g = row('summary.json'), row('summary-greedy.json')
        return (s['success'], s['ci95']), (g['success'], g['ci95'])
    s, g = (json.load(open(os.path.join(folder, n))) for n in ('eval-T1.json', 'eval-greedy.json'))
    return (s['success'], s['success_ci95']), (g['success'], g['success_ci95'])


def fmt(x):
    return f'{x[0]:.3f} [{x[1][0]:.3f}, {x[1][1]:.3f}]'


def main():
    curves = [curve(os.path.join(f, 'metrics.jsonl')) for _, f, _ in BASES]
    print('| base (seed 1) | val NLL at 3000 | sampled (T = 1) | greedy |')
    print('| --- | ---: | --- | --- |')
    for (name, f, kind), c in zip(BASES, curves):
        s, g = success(f, kind)
        print(f'| {name} | {c[3000]:.4f} | {fmt(s)} | {fmt(g)} |')
    print('\nValidation NLL along training:\n')
    print('| step | ' + ' | '.join(n for n, _, _ in BASES) + ' |')
    print('| ---: |' + ' ---: |' * len(BASES))
    for step in sorted(curves[0]):
        if step % 400 == 0 or step == 200:
            print(f'| {step} | ' + ' | '.join(f'{c[step]:.4f}' for c in curves) + ' |')


if __name__ == '__main__':
    main()
