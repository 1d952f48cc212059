"""Each mend's change in the calibrated simulator's BLEU with the base
policy on the gate's 300 validation problems, paired by problem: the
human proxy's side of the gap is the same conversations in every
condition, so the change in the gap is the change in the simulator's
BLEU. bleu.json holds, per seed and condition, the simulator's BLEU per
problem in index order; run with RUNS=DIR (the run folders DIR/ded-COND-sS)
it is first rebuilt from their fidelity/sim.gap.sim.episodes.jsonl.

  python3 paired.py            # from bleu.json
"""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import paired  # noqa: E402

CONDS = {'plain': 'fitted', 'pc': '+ copy', 'l': '+ ledger', 'lc': '+ ledger + copy'}
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, 'bleu.json')
runs = os.environ.get('RUNS')
if runs:
    B = {}
    for s in (1, 2):
        for c in CONDS:
            eps = [json.loads(l) for l in open(f'{runs}/ded-{c}-s{s}/fidelity/sim.gap.sim.episodes.jsonl')]
            B[f'{c}-s{s}'] = [round(e['metrics']['bleu'], 4) for e in sorted(eps, key=lambda e: e['index'])]
    json.dump(B, open(path, 'w'), indent=0, sort_keys=True)
    # Per user, in the base's conversations with it: how often the users'
    # turns point at a sentence by number ("In sentence 2, ..."), numbers
    # the copy cannot find in the problem; how often the base delivers a
    # document; how the conversations end.
    import re
    for s in (1, 2):
        for c in ('human',) + tuple(CONDS):
            f = f'{runs}/ded-{"plain" if c == "human" else c}-s{s}/fidelity/sim.gap.{"human" if c == "human" else "sim"}.episodes.jsonl'
            eps = [json.loads(l) for l in open(f)]
            turns = [m['content'] for e in eps for m in e['messages'] if m['role'] == 'user']
            n = sum(bool(re.search(r'sentence \d', t)) for t in turns)
            delivered = sum(e['metrics'].get('delivered', 0) for e in eps) / len(eps)
            ends = {k: sum(e['end'] == k for e in eps) for k in sorted({e['end'] for e in eps})}
            print(f'seed {s} {CONDS.get(c, "human proxy")}: {n} of {len(turns)} user turns name a sentence by number; '
                  f'delivered {delivered:.3f}, ends of {len(eps)}: {ends}')
B = json.load(open(path))
print('| seed | condition | simulator BLEU | change from fitted [95%, paired bootstrap over problems] |')
print('| --- | --- | --- | --- |')
for s in (1, 2):
    base = B[f'plain-s{s}']
    for c, name in CONDS.items():
        x = B[f'{c}-s{s}']
        mean = sum(x) / len(x)
        if c == 'plain':
            print(f'| {s} | {name} | {mean:.2f} | |')
            continue
        d, lo, hi = paired(x, base)
        print(f'| {s} | {name} | {mean:.2f} | {d:+.2f} [{lo:+.2f}, {hi:+.2f}] |')
