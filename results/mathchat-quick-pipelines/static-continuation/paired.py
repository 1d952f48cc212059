import json,random,sys
def load(f):
    return {json.loads(l)['index']:(1.0 if json.loads(l).get('success') else 0.0) for l in open(f)}
def cmp(a,b,T):
    A=load(f'{a}-T{T}.episodes.jsonl'); B=load(f'{b}-T{T}.episodes.jsonl')
    ks=sorted(set(A)&set(B)); d=[A[k]-B[k] for k in ks]
    rng=random.Random(1); n=len(d); m=sum(d)/n
    bs=sorted(sum(d[rng.randrange(n)] for _ in range(n))/n for _ in range(2000))
    print(f'{a:20s} - {b:15s} T={T:>2}: {m:+.3f} [{bs[49]:+.3f}, {bs[1949]:+.3f}] n={n}')
for T in ('1','-1'):
    for a,b in [('static-continuation','base'),('static-continuation','static-outcome'),('calibrated','static-continuation'),('static-outcome','base'),('calibrated','base'),('oracle','base')]:
        cmp(a,b,T)
