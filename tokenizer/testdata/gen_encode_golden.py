#!/usr/bin/env python3
"""Writes encode_golden.json: token ids for sample strings under
golden_tokenizer.json, computed independently of the Go code, the way
Hugging Face tokenizers reads the file: the pre_tokenizer (Digits with
individual_digits, then ByteLevel's GPT-2 pattern), the byte-to-unicode map,
then BPE with model.merges as ranks (the lowest-ranked adjacent pair is
merged first, as in OpenAI's GPT-2 encoder.py). TestEncodeGolden checks
Encode against it. Run by hand after regenerating golden_tokenizer.json:
python3 gen_encode_golden.py > encode_golden.json
"""
import json
import random
import sys
import unicodedata

import regex

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


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


def main():
    tok = json.load(open("golden_tokenizer.json", encoding="utf-8"))
    model = tok["model"]
    assert model["type"] == "BPE"
    vocab = model["vocab"]
    ranks = {tuple(m.split(" ")): i for i, m in enumerate(model["merges"])}
    pre = tok["pre_tokenizer"]
    digits = pre["type"] == "Sequence" and pre["pretokenizers"][0]["type"] == "Digits"
    b2u = bytes_to_unicode()

    def bpe(word):
        word = list(word)
        while len(word) > 1:
            pairs = [(ranks.get((word[i], word[i + 1]), 1 << 30), i) for i in range(len(word) - 1)]
            r, i = min(pairs)
            if r == 1 << 30:
                break
            word[i:i + 2] = [word[i] + word[i + 1]]
        return word

    def segments(s):
        if not digits:
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
        if cur:
            out.append(cur)
        return out

    def encode(s):
        ids = []
        for seg in segments(s):
            for piece in PAT.findall(seg):
                mapped = "".join(b2u[b] for b in piece.encode("utf-8"))
                ids.extend(vocab[t] for t in bpe(mapped))
        return ids

    rng = random.Random(7)
    samples = [
        "Maya buys 12 apples at $3.50 each. How many are left?",
        "that doesn't match what I got.",
        "Here is the revised note:\n\nThe garden committee met on 4 March.",
        "  spaces   and\ttabs\n\n",
        "<|end|> is plain text here",
        "héllo wörld 你好 🙂 ½ ٣",
        "The answer is \\boxed{42}.",
    ]
    words = " ".join(samples).split(" ")
    for _ in range(200):
        samples.append(" ".join(rng.choice(words) for _ in range(rng.randrange(1, 12))))
    json.dump([{"in": s, "ids": encode(s)} for s in samples], sys.stdout, ensure_ascii=True, separators=(",", ":"))


if __name__ == "__main__":
    main()
