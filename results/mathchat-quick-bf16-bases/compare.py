"""Bases SFT-trained in bf16 against the same pipelines' fp32 bases.

For each seed, seed-S/ holds the bf16 base's validation NLL along training
(metrics.jsonl, base stage only) and its evaluations against the human
proxy on the test slice's 500 problems, played in fp32 (eval-T1.json
sampled at T = 1, eval-greedy.json greedy). The fp32 base of the same
pipeline is read from the folder FP32[S] names (its summary*.json and
metrics.jsonl). Run from this folder: python3 compare.py."""
import json, os

FP32 = {
    1: '../mathchat-quick-sampleprec/fp32',
    5: '../mathchat-quick-table/seed-5',
    6: '../mathchat-quick-table/seed-6',
}


def last_nll(path):
    nll = [d for d in map(json.loads, open(path)) if d.get('stage') == 'base' and 'sft/val_nll' in d]
    return max(nll, key=lambda d: d['step'])['sft/val_nll']


def base_row(path):
    return next(r for r in json.load(open(path)) if r['arm'] == 'base')


def fmt(p, ci):
    return f'{p:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]'


def main():
    print('| seed | NLL fp32 | NLL bf16 | sampled fp32 | sampled bf16 | greedy fp32 | greedy bf16 |')
    print('| --- | ---: | ---: | --- | --- | --- | --- |')
    diffs = {'sampled': [], 'greedy': []}
    for s, f in FP32.items():
        b = f'seed-{s}'
        if not os.path.exists(os.path.join(b, 'eval-greedy.json')):
            continue
        fs, fg = base_row(os.path.join(f, 'summary.json')), base_row(os.path.join(f, 'summary-greedy.json'))
        bs, bg = (json.load(open(os.path.join(b, n))) for n in ('eval-T1.json', 'eval-greedy.json'))
        print(f'| {s} | {last_nll(os.path.join(f, "metrics.jsonl")):.4f} | {last_nll(os.path.join(b, "metrics.jsonl")):.4f} '
              f'| {fmt(fs["success"], fs["ci95"])} | {fmt(bs["success"], bs["success_ci95"])} '
              f'| {fmt(fg["success"], fg["ci95"])} | {fmt(bg["success"], bg["success_ci95"])} |')
        diffs['sampled'].append(bs['success'] - fs['success'])
        diffs['greedy'].append(bg['success'] - fg['success'])
    for k, d in diffs.items():
        if d:
            print(f'\nbf16 − fp32, {k}: ' + ', '.join(f'{x:+.3f}' for x in d) + f' (mean {sum(d) / len(d):+.3f} over {len(d)} pipelines)')


if __name__ == '__main__':
    main()
