#!/usr/bin/env python3
"""Writes split_golden.json: random strings and their pieces under the GPT-2
pre-tokenization pattern, as OpenAI's GPT-2 encoder and Hugging Face's
ByteLevel pre-tokenizer apply it, computed with the `regex` module (which,
unlike Go's regexp, has look-ahead). TestSplitGolden checks splitWords
against it. Run by hand: python3 gen_split_golden.py > split_golden.json

U+001C..U+001F are left out: Python counts them as whitespace, Oniguruma
(used by Hugging Face) and Go do not. So are code points unassigned in
Python's unicodedata (Unicode 14): their class depends on the Unicode version
of each library.
"""
import json
import random
import unicodedata

import regex

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")

ATOMS = [" ", "  ", "   ", "\n", "\r\n", "\t", "\u00a0", "\u2028", "\u3000", "\u0085", "'", "'s", "'re", "'ll",
         "'S", "a", "Z", "é", "ß", "你", "好", "🙂", "1", "42", "½", "٣", "Ⅻ", ".", "!?", "$", "<|end|>",
         "-", "_", "\u0301", "the", " the", "don't", "x2", "\u200b", "\x00", "\x7f"]


def main():
    rng = random.Random(20261130)
    cases = []
    for _ in range(1500):
        parts = []
        for _ in range(rng.randrange(1, 16)):
            if rng.random() < 0.15:
                c = rng.randrange(0x20, 0x30000)
                if 0xD800 <= c <= 0xDFFF or unicodedata.category(chr(c)) == "Cn":
                    continue
                parts.append(chr(c))
            else:
                parts.append(rng.choice(ATOMS))
        s = "".join(parts)
        cases.append({"in": s, "pieces": PAT.findall(s)})
    json.dump(cases, __import__("sys").stdout, ensure_ascii=True, separators=(",", ":"))


if __name__ == "__main__":
    main()
