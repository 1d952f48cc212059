#!/usr/bin/python3
"""Rebuilds a calibrl checkpoint folder in PyTorch from its files alone and
compares per-token log-probs and greedy turns with calibrl's.

Run by hand, not by the test suite:

  apt-get install -y python3-torch python3-jinja2 python3-regex   # Debian 12
  CALIBRL_HF_REF=/tmp/hfref go test ./lm/ -run TestWriteHFReference -count=1
  OMP_NUM_THREADS=2 /usr/bin/python3 lm/testdata/hf_reference.py /tmp/hfref

The Go test writes /tmp/hfref/model, a checkpoint folder (a small model it
trains, or CALIBRL_HF_REF_FROM=DIR re-saved), and /tmp/hfref/logprobs.json:
per conversation, the ids calibrl renders (RenderChat, or RenderPrompt when
"next" is set), log p(ids[i+1] | ids[<=i]) from lm's Forward, and a greedy
turn from lm's Sample. This script uses only the folder's files, read as
Hugging Face transformers reads them, and no calibrl code:

  config.json              sizes (GPT-2 keys), tie_word_embeddings
  model.safetensors        weights, the format parsed by hand (F32)
  tokenizer.json           added tokens, byte-level BPE vocab and merges,
                           pre-tokenizer (Digits, then GPT-2's pattern)
  tokenizer_config.json    chat_template, rendered with Jinja2 as
                           apply_chat_template renders it
  generation_config.json   eos_token_id: where a greedy turn stops

It checks that the template's text tokenizes to calibrl's ids, that a
float64 GPT-2 forward gives calibrl's log-probs (max |delta| printed;
fails above --tol), and that greedy decoding up to the generation config's
eos ids writes calibrl's greedy turn. Exit status 0 when all agree.
"""
import argparse
import json
import math
import os
import struct
import sys
import unicodedata

import regex
import torch
from jinja2.sandbox import ImmutableSandboxedEnvironment

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def load_safetensors(path):
    """The safetensors format: u64 little-endian header size, JSON header
    {name: {dtype, shape, data_offsets}}, then the raw little-endian data."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (name, e["dtype"])
        a, b = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float32)
        out[name] = t.reshape(e["shape"]).double()
    return out


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class Tokenizer:
    """tokenizer.json as Hugging Face tokenizers applies it: the input is
    split on added tokens first, each other part is pre-tokenized (Digits
    individual_digits, then ByteLevel's GPT-2 pattern), mapped to the
    byte-level alphabet and merged by BPE in merge-rank order."""

    def __init__(self, path):
        tok = json.load(open(path, encoding="utf-8"))
        model = tok["model"]
        assert model["type"] == "BPE"
        self.vocab = model["vocab"]
        self.ranks = {tuple(m.split(" ") if isinstance(m, str) else m): i for i, m in enumerate(model["merges"])}
        pre = tok["pre_tokenizer"]
        self.digits = pre["type"] == "Sequence" and pre["pretokenizers"][0]["type"] == "Digits"
        self.added = {a["content"]: a["id"] for a in tok["added_tokens"]}
        alts = sorted(self.added, key=len, reverse=True)
        self.split = regex.compile("(" + "|".join(regex.escape(a) for a in alts) + ")")
        self.b2u = bytes_to_unicode()

    def bpe(self, word):
        word = list(word)
        while len(word) > 1:
            r, i = min((self.ranks.get((word[i], word[i + 1]), 1 << 30), i) for i in range(len(word) - 1))
            if r == 1 << 30:
                break
            word[i:i + 2] = [word[i] + word[i + 1]]
        return word

    def segments(self, s):
        if not self.digits:
            return [s]
        out, cur = [], ""
        for c in s:
            if unicodedata.category(c) in ("Nd", "Nl", "No"):
                if cur:
                    out.append(cur)
                out.append(c)
                cur = ""
            else:
                cur += c
        return out + [cur] if cur else out

    def encode(self, text):
        ids = []
        for part in self.split.split(text):
            if part in self.added:
                ids.append(self.added[part])
                continue
            for seg in self.segments(part):
                for piece in PAT.findall(seg):
                    mapped = "".join(self.b2u[b] for b in piece.encode("utf-8"))
                    ids.extend(self.vocab[t] for t in self.bpe(mapped))
        return ids


class GPT2:
    """GPT-2 from config.json and the weights: token + position embeddings,
    pre-norm blocks (LayerNorm, causal attention, LayerNorm, gelu_new MLP),
    final LayerNorm, output tied to wte unless lm_head.weight is given.
    Linear weights are [in, out] (Conv1D): y = x @ W + b. float64."""

    def __init__(self, cfg, w):
        assert cfg["model_type"] == "gpt2" and cfg.get("activation_function", "gelu_new") == "gelu_new"
        self.C, self.L, self.NH = cfg["n_embd"], cfg["n_layer"], cfg["n_head"]
        self.eps = cfg.get("layer_norm_epsilon", 1e-5)
        self.w = {k.removeprefix("transformer."): v for k, v in w.items()}
        tied = cfg.get("tie_word_embeddings", True)
        self.head = self.w["wte.weight"] if tied else self.w["lm_head.weight"]
        assert self.w["wte.weight"].shape == (cfg["vocab_size"], self.C)
        assert self.w["wpe.weight"].shape[0] == cfg["n_positions"]

    def ln(self, x, p):
        return torch.nn.functional.layer_norm(x, (self.C,), self.w[p + ".weight"], self.w[p + ".bias"], self.eps)

    def logits(self, ids):
        W, T, C, NH = self.w, len(ids), self.C, self.NH
        HS = C // NH
        x = W["wte.weight"][torch.tensor(ids)] + W["wpe.weight"][:T]
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        for l in range(self.L):
            p = f"h.{l}."
            h = self.ln(x, p + "ln_1")
            q, k, v = (h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]).split(C, dim=-1)
            q, k, v = (t.view(T, NH, HS).transpose(0, 1) for t in (q, k, v))
            att = (q @ k.transpose(-1, -2) / math.sqrt(HS)).masked_fill(~mask, float("-inf")).softmax(-1)
            y = (att @ v).transpose(0, 1).reshape(T, C)
            x = x + y @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
            h = self.ln(x, p + "ln_2")
            h = h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"]
            h = 0.5 * h * (1 + torch.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h ** 3)))
            x = x + h @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        return self.ln(x, "ln_f") @ self.head.T

    def logprobs(self, ids):
        lsm = self.logits(ids).log_softmax(-1)
        return [lsm[t, ids[t + 1]].item() for t in range(len(ids) - 1)]

    def greedy(self, ids, eos, max_new, context):
        out = []
        while len(out) < max_new and len(ids) + len(out) < context:
            nxt = int(self.logits(ids + out)[-1].argmax())
            out.append(nxt)
            if nxt in eos:
                break
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ref", help="folder with model/ and logprobs.json (CALIBRL_HF_REF)")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest |delta log-prob| accepted")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    folder = os.path.join(args.ref, "model")
    cfg = json.load(open(os.path.join(folder, "config.json")))
    gen = json.load(open(os.path.join(folder, "generation_config.json")))
    tcfg = json.load(open(os.path.join(folder, "tokenizer_config.json")))
    tok = Tokenizer(os.path.join(folder, "tokenizer.json"))
    model = GPT2(cfg, load_safetensors(os.path.join(folder, "model.safetensors")))
    eos = gen["eos_token_id"] if isinstance(gen["eos_token_id"], list) else [gen["eos_token_id"]]
    assert eos == cfg["eos_token_id"], (eos, cfg["eos_token_id"])
    assert tok.added[tcfg["eos_token"]] in eos and tok.added[tcfg["pad_token"]] == cfg["pad_token_id"]
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)  # as transformers
    template = env.from_string(tcfg["chat_template"])

    ok, worst, n = True, 0.0, 0
    for i, case in enumerate(json.load(open(os.path.join(args.ref, "logprobs.json")))):
        kw = {"add_generation_prompt": bool(case.get("next"))}
        if case.get("next") == "user":
            kw["generation_role"] = "user"
        text = template.render(messages=case["messages"], **kw)
        ids = tok.encode(text)
        if ids != case["ids"]:
            print(f"case {i}: template + tokenizer.json give {ids}\n  calibrl {case['ids']}")
            ok = False
            continue
        lp = model.logprobs(ids)
        d = max(abs(a - b) for a, b in zip(lp, case["logprobs"]))
        worst, n = max(worst, d), n + len(lp)
        line = f"case {i}: {len(ids)} tokens, max |delta log-prob| {d:.3g}"
        if case.get("greedy"):
            g = model.greedy(ids, eos, len(case["greedy"]) if case["greedy"][-1] not in eos else 1 << 30, cfg["n_positions"])
            same = g == case["greedy"]
            stop = "stopped at eos" if g and g[-1] in eos else "no eos"
            line += f"; greedy {len(g)} tokens ({stop}) {'match' if same else 'DIFFER: ' + str(g) + ' vs ' + str(case['greedy'])}"
            ok = ok and same
        print(line)
        ok = ok and d <= args.tol
    print(f"{n} log-probs, max |delta log-prob| {worst:.3g} (tol {args.tol:g}): {'OK' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
