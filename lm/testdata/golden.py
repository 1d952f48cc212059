#!/usr/bin/python3
"""Writes golden.safetensors, the PyTorch reference for lm's golden test.

A GPT-2 decoder written independently of the Go code, in float64 with
torch autograd: token + position embeddings, pre-norm blocks (LayerNorm
eps 1e-5, causal multi-head attention, tanh-GELU MLP 4C), final LayerNorm,
output tied to wte. Linear weights are [in, out] (Hugging Face Conv1D), so
y = x @ W + b. Weights are drawn in float32 and widened, so the Go model
loads them exactly; the reference numbers are then float64 results rounded
to float32.

Stored tensors (all F32): every parameter under its lm name, "tokens" [B,T]
(integer ids), "lens" [B], "r" [B,T] (the upstream gradient), "logp" [B,T],
and "grad.<name>" = d(sum(r*logp))/d<name>.

Run: /usr/bin/python3 lm/testdata/golden.py  (Debian python3-torch 1.13).
"""
import json
import math
import struct
import sys

import torch

V, CTX, C, L, NH = 50, 16, 16, 2, 2
B, T = 3, 12
LENS = [12, 7, 2]

g = torch.Generator().manual_seed(1234)


def rnd(*shape, std=0.3):
    return (torch.randn(*shape, generator=g, dtype=torch.float32) * std).double().requires_grad_()


params = {"wte.weight": rnd(V, C), "wpe.weight": rnd(CTX, C)}
for l in range(L):
    p = f"h.{l}."
    params[p + "ln_1.weight"] = (1 + rnd(C, std=0.1)).detach().float().double().requires_grad_()
    params[p + "ln_1.bias"] = rnd(C, std=0.1)
    params[p + "attn.c_attn.weight"] = rnd(C, 3 * C)
    params[p + "attn.c_attn.bias"] = rnd(3 * C, std=0.1)
    params[p + "attn.c_proj.weight"] = rnd(C, C)
    params[p + "attn.c_proj.bias"] = rnd(C, std=0.1)
    params[p + "ln_2.weight"] = (1 + rnd(C, std=0.1)).detach().float().double().requires_grad_()
    params[p + "ln_2.bias"] = rnd(C, std=0.1)
    params[p + "mlp.c_fc.weight"] = rnd(C, 4 * C)
    params[p + "mlp.c_fc.bias"] = rnd(4 * C, std=0.1)
    params[p + "mlp.c_proj.weight"] = rnd(4 * C, C)
    params[p + "mlp.c_proj.bias"] = rnd(C, std=0.1)
params["ln_f.weight"] = (1 + rnd(C, std=0.1)).detach().float().double().requires_grad_()
params["ln_f.bias"] = rnd(C, std=0.1)

tokens = torch.randint(0, V, (B, T), generator=g)
r = torch.randn(B, T, generator=g, dtype=torch.float32).double()


def ln(x, w, b):
    m = x.mean(-1, keepdim=True)
    v = ((x - m) ** 2).mean(-1, keepdim=True)
    return (x - m) / torch.sqrt(v + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def forward(P):
    x = P["wte.weight"][tokens] + P["wpe.weight"][torch.arange(T)]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    HS = C // NH
    for l in range(L):
        p = f"h.{l}."
        h = ln(x, P[p + "ln_1.weight"], P[p + "ln_1.bias"])
        qkv = h @ P[p + "attn.c_attn.weight"] + P[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(C, dim=-1)
        q = q.view(B, T, NH, HS).transpose(1, 2)
        k = k.view(B, T, NH, HS).transpose(1, 2)
        v = v.view(B, T, NH, HS).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(HS)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ P[p + "attn.c_proj.weight"] + P[p + "attn.c_proj.bias"]
        h = ln(x, P[p + "ln_2.weight"], P[p + "ln_2.bias"])
        x = x + gelu(h @ P[p + "mlp.c_fc.weight"] + P[p + "mlp.c_fc.bias"]) @ P[p + "mlp.c_proj.weight"] + P[p + "mlp.c_proj.bias"]
    x = ln(x, P["ln_f.weight"], P["ln_f.bias"])
    logits = x @ P["wte.weight"].T
    lsm = logits.log_softmax(-1)
    logp = torch.zeros(B, T, dtype=torch.float64)
    for b in range(B):
        for t in range(LENS[b] - 1):
            logp[b, t] = lsm[b, t, tokens[b, t + 1]]
    return logp


logp = forward(params)
(logp * r).sum().backward()

out = [(n, p.detach()) for n, p in params.items()]
out += [("tokens", tokens.double()), ("lens", torch.tensor(LENS, dtype=torch.float64)), ("r", r), ("logp", logp.detach())]
out += [("grad." + n, p.grad) for n, p in params.items()]

header, blobs, off = {}, [], 0
for name, t in out:
    data = t.float().contiguous().numpy().tobytes()
    header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
    blobs.append(data)
    off += len(data)
hj = json.dumps(header).encode()
hj += b" " * (-len(hj) % 8)
path = sys.argv[1] if len(sys.argv) > 1 else __file__.rsplit("/", 1)[0] + "/golden.safetensors"
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
print(f"wrote {path}: {len(out)} tensors, sum(r*logp) = {(logp * r).sum().item():.6f}")
