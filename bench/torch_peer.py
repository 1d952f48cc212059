#!/usr/bin/python3
"""PyTorch peer of `calibrl bench`: the same GPT model and the same four figures.

Builds calibrl's model (package lm) in PyTorch — GPT-2 decoder: token and
learned position embeddings, pre-norm blocks (LayerNorm eps 1e-5 -> causal
multi-head attention -> residual, LayerNorm -> MLP 4C with tanh-GELU
"gelu_new" -> residual), final LayerNorm, output tied to the token embedding,
biases in every Linear as in GPT-2 — and measures on the CPU in fp32:

  train_tokens_per_s   B*T / time of one step: forward, next-token NLL,
                       backward, gradient clip at norm 1, AdamW (lr 1e-3,
                       betas 0.9/0.95, eps 1e-8, decay 0.1 on 2-D tensors)
  forward_ms           per-token log-probs of a [B,T] batch, no grad
  sample_tokens_per_s  B*new / time of KV-cache sampling (prompt prefill
                       included), temperature 1, hand-written cache since
                       torch 1.13 has none
  gemm_gflops_2048     one 2048x2048x2048 fp32 matmul

with B=16, T=256, prompt 32, new 128, and torch.set_num_threads(2) (the
machine's cores). Each figure is the best (shortest) of several timed
repetitions after warm-up: on a shared 2-core machine torch's OpenMP
threads stall whenever another process takes a core, so medians swing
several-fold between runs while the best time reproduces. stdout gets exactly one JSON object,

  {"configs":[{"name":"A","params":N,"train_tokens_per_s":x,"forward_ms":x,
   "sample_tokens_per_s":x},...],"gemm_gflops_2048":x}

and stderr the BLAS library in use and progress. Run it through
bench/compare.sh, which pins OpenBLAS (the reference BLAS is 35-70x slower),
or by hand:

  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp /usr/bin/python3 bench/torch_peer.py
"""

import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# Benchmark configs; must agree with lm.Config and `calibrl bench`.
CONFIGS = {
    "A": dict(vocab=512, context=256, dim=128, layers=4, heads=4),
    "B": dict(vocab=512, context=256, dim=256, layers=4, heads=8),
}
BATCH, SEQ = 16, 256
PROMPT, NEW = 32, 128


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim, eps=1e-5)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-5)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def attention(self, x, cache, pos):
        B, T, C = x.shape
        nh, hs = self.heads, C // self.heads
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, nh, hs).transpose(1, 2)  # [B,NH,T,HS]
        k = k.view(B, T, nh, hs).transpose(1, 2)
        v = v.view(B, T, nh, hs).transpose(1, 2)
        if cache is not None:  # KV cache [B,NH,maxT,HS] x2, filled up to pos
            kc, vc = cache
            kc[:, :, pos:pos + T] = k
            vc[:, :, pos:pos + T] = v
            k, v = kc[:, :, :pos + T], vc[:, :, :pos + T]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # [B,NH,T,pos+T]
        if T > 1:
            S = k.shape[2]
            mask = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
            att = att.masked_fill(~mask, float("-inf"))
        y = F.softmax(att, dim=-1) @ v  # [B,NH,T,HS]
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x, cache=None, pos=0):
        x = x + self.attention(self.ln_1(x), cache, pos)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, context, dim, layers, heads):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.h = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=1e-5)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx, caches=None, pos=0):
        """idx [B,T] -> logits [B,T,V]; with caches, positions pos..pos+T-1."""
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(pos, pos + T))
        for i, block in enumerate(self.h):
            x = block(x, None if caches is None else caches[i], pos)
        return self.ln_f(x) @ self.wte.weight.t()  # tied output

    def logprobs(self, idx):
        """logp[b,t] = log p(idx[b,t+1] | idx[b,<=t]) for t < T-1."""
        logits = self(idx)[:, :-1]
        return torch.log_softmax(logits, dim=-1).gather(2, idx[:, 1:, None])[..., 0]


def optimizer(model):
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() != 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
        lr=1e-3, betas=(0.9, 0.95), eps=1e-8)


def best_time(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


@torch.no_grad()
def sample(model, prompt, new, context):
    """KV-cache sampling: prefill the prompt, then one token per step."""
    B, P = prompt.shape
    C = model.wte.weight.shape[1]
    caches = []
    for block in model.h:
        shape = (B, block.heads, context, C // block.heads)
        caches.append((torch.empty(shape), torch.empty(shape)))
    logits = model(prompt, caches, 0)[:, -1]
    out = []
    for pos in range(P, P + new):
        nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)  # temperature 1
        out.append(nxt)
        if pos + 1 < P + new:
            logits = model(nxt, caches, pos)[:, -1]
    return torch.cat(out, dim=1)


def bench_config(name, cfg, reps, log):
    torch.manual_seed(1)
    model = GPT(**cfg)
    params = sum(p.numel() for p in model.parameters())
    log(f"config {name}: {params} parameters")
    tokens = torch.randint(0, cfg["vocab"], (BATCH, SEQ))
    opt = optimizer(model)

    def train_step():
        logp = model.logprobs(tokens)
        loss = -logp.mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    step = best_time(train_step, 2, reps)
    log(f"  train {step * 1e3:.1f} ms/step")

    def forward():
        with torch.no_grad():
            model.logprobs(tokens)

    fwd = best_time(forward, 2, reps)
    log(f"  forward {fwd * 1e3:.1f} ms")

    prompt = torch.randint(0, cfg["vocab"], (BATCH, PROMPT))
    samp = best_time(lambda: sample(model, prompt, NEW, cfg["context"]), 1, max(3, reps // 2))
    log(f"  sample {samp * 1e3:.1f} ms for {BATCH}x{NEW} tokens")
    return {
        "name": name,
        "params": params,
        "train_tokens_per_s": BATCH * SEQ / step,
        "forward_ms": fwd * 1e3,
        "sample_tokens_per_s": BATCH * NEW / samp,
    }


def gemm_gflops(reps):
    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    t = best_time(lambda: a @ b, 2, reps)
    return 2 * 2048 ** 3 / t / 1e9


def blas_library():
    """The BLAS shared object this process mapped, read from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower()}
        return ", ".join(sorted(libs)) or "none mapped"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="A,B", help="comma-separated config names (A,B)")
    ap.add_argument("--reps", type=int, default=7, help="timed repetitions per figure")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    args = ap.parse_args()
    names = [n for n in args.configs.split(",") if n]
    for n in names:
        if n not in CONFIGS:
            ap.error(f"unknown config {n!r}; have {','.join(CONFIGS)}")
    torch.set_num_threads(args.threads)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    gflops = gemm_gflops(args.reps)  # first: loads the BLAS library
    log(f"torch {torch.__version__}, {torch.get_num_threads()} threads, BLAS: {blas_library()}")
    log(f"2048^3 matmul {gflops:.1f} GFLOP/s")
    out = {"configs": [bench_config(n, CONFIGS[n], args.reps, log) for n in names],
           "gemm_gflops_2048": gflops}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
