#!/usr/bin/python3
"""Write metric/testdata/nltk_vectors.json: BLEU and chrF test vectors
computed by NLTK, an implementation independent of calibrl's Go code.

Run with Debian's NLTK (apt-get install python3-nltk):

    /usr/bin/python3 metric/testdata/nltk_vectors.py > metric/testdata/nltk_vectors.json

The pairs are made here from a fixed seed and are already tokenised: every
token is invariant under the 13a tokeniser (the Go test checks that), so
NLTK, which takes token lists, and the Go code, which tokenises text, see the
same words. The Go tests read the JSON and need no Python.

How each NLTK figure maps onto sacreBLEU's definitions (all x100):

- sentence_bleu(refs, hyp, SmoothingFunction().method3, auto_reweigh=True)
  is sacreBLEU's sentence BLEU ('exp' smoothing, effective order): method3 is
  NIST's geometric smoothing 1/(2^k * total) for the k-th order with no
  match, and auto_reweigh uses uniform weights over len(hyp) orders when the
  hypothesis is shorter than 4 tokens, which is what effective order does.
- corpus_bleu(..., method3) is sacreBLEU's corpus BLEU ('exp', no effective
  order) when every hypothesis has at least 4 tokens. NLTK's
  modified_precision floors each segment's n-gram total at 1, so a
  hypothesis shorter than n adds a phantom n-gram to the corpus total of
  order n (and an order with no n-grams at all gets smoothed instead of
  ending the product, where sacreBLEU scores 0). Corpora with such
  segments go to "bleu_differs"; the Go test reproduces NLTK's figure there
  by applying the same floor to its own statistics.
- sentence_chrf(ref, hyp, beta=2) (whitespace removed, orders 1..6) is
  sacreBLEU's chrF with eps_smoothing=True: the mean of per-order F-scores
  with epsilon for undefined orders. The two differ only by epsilon-sized
  terms (1e-16).
- corpus_chrf(refs, hyps, beta=2) is the mean of the sentence scores (NLTK
  macro-averages; sacreBLEU sums statistics), so it is kept as such.
- sacreBLEU's default chrF (effective-order average of precision and
  recall, then one F-score) and chrF++ have no NLTK function. For them this
  script takes the per-order match counts from NLTK's
  chrf_precision_recall_fscore_support (character n-grams, and word n-grams
  after sacreBLEU's punctuation splitting, written out below) and applies
  sacreBLEU's formula here: "counts_chrf", "counts_chrfpp".

It also writes "tokenize_13a": random strings and what the 13a rules give
when run by Python's own re engine and str.split (rules as documented on
Tokenize13a in metric/tokenize.go), to pin the Go port's scanning order,
digit handling and whitespace set against the real thing.
"""

import json
import random
import re
import sys
from collections import Counter

import nltk
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from nltk.translate.chrf_score import (
    chrf_precision_recall_fscore_support,
    corpus_chrf,
    sentence_chrf,
)
from nltk.util import ngrams

SEED = 20261130
TOLERANCE = 1e-9  # absolute, on the 0-100 scale

# Words made up for this file; no copied prose. Some carry accents or are in
# other scripts to exercise code-point handling; numbers keep their inner
# period or comma under 13a; the apostrophe is not split by 13a.
WORDS = (
    "the a of to and in is on for with by at as it this that draft memo note "
    "team meeting schedule report budget plan item order price total ship date "
    "room floor desk lamp blue green red fast slow new old early late first last "
    "monday tuesday friday march june alice bob carol dave don't won't it's "
    "café naïve über straße señor Привет мир 東京 数据 ελληνικά "
    "3.5 1,000 42 7 2026 0.25 . , ! ? ( ) : ; - \""
).split()

SMOOTH = SmoothingFunction().method3

# The 13a rules (mteval-v13a as sacreBLEU writes them), for tokenize_13a.
RULES_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for a, b in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        line = line.replace(a, b)
    line = " %s " % line
    for pat, rep in RULES_13A:
        line = pat.sub(rep, line)
    return " ".join(line.split())


# Pieces the random 13a inputs are built from: the characters and strings
# the rules treat specially, a few letters and digits, and odd whitespace.
PIECES = list("ab9Z07.,-'\"&;<>()[]{}/:@!?$%_`~^|+*=#") + [
    " ", " ", "\n", "\t", "\r", "\x1c", "\x1f", "\xa0", "\u2003", "\u3000",
    "&quot;", "&amp;", "&lt;", "&gt;", "&amp;lt;", "<skipped>", "-\n",
    "é", "ß", "東", "–", "—", "…", "’", "１", "٣",
]


def x100(v):
    return float(v) * 100.0


def corrupt(rng, toks, k):
    """Apply k random word edits: delete, insert, replace, swap."""
    out = list(toks)
    for _ in range(k):
        op = rng.choice(("del", "ins", "rep", "swap"))
        if op == "ins" or not out:
            out.insert(rng.randint(0, len(out)), rng.choice(WORDS))
        elif op == "del":
            del out[rng.randrange(len(out))]
        elif op == "rep":
            out[rng.randrange(len(out))] = rng.choice(WORDS)
        elif len(out) > 1:
            i = rng.randrange(len(out) - 1)
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def sacre_words(sent):
    """sacreBLEU's chrF++ word splitter (CHRF._remove_punctuation)."""
    puncts = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    out = []
    for w in sent.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in puncts:
            out += [w[:-1], w[-1]]
        elif w[0] in puncts:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


def order_counts(ref_seq, hyp_seq, n):
    """[hyp, ref, match] for one order, with match from NLTK and sacreBLEU's
    rule that hyp counts as 0 when the reference has no n-gram."""
    _, _, _, tp = chrf_precision_recall_fscore_support(ref_seq, hyp_seq, n, beta=2)
    n_hyp = max(0, len(hyp_seq) - n + 1)
    n_ref = max(0, len(ref_seq) - n + 1)
    return [n_hyp if n_ref > 0 else 0, n_ref, tp]


def chrf_counts(ref, hyp, word_order):
    ref_c, hyp_c = "".join(ref.split()), "".join(hyp.split())
    stats = [order_counts(ref_c, hyp_c, n) for n in range(1, 7)]
    if word_order:
        rw, hw = sacre_words(ref), sacre_words(hyp)
        stats += [order_counts(rw, hw, n) for n in range(1, word_order + 1)]
    return stats


def sacre_chrf_formula(stats, beta=2):
    """sacreBLEU 2.x CHRF._compute_f_score with eps_smoothing=False."""
    factor = beta ** 2
    avg_p = avg_r = 0.0
    eff = 0
    for n_hyp, n_ref, n_match in stats:
        if n_hyp > 0 and n_ref > 0:
            avg_p += n_match / n_hyp
            avg_r += n_match / n_ref
            eff += 1
    if eff == 0:
        return 0.0
    avg_p /= eff
    avg_r /= eff
    if avg_p + avg_r == 0:
        return 0.0
    return 100 * (1 + factor) * avg_p * avg_r / (factor * avg_p + avg_r)


def sentence_case(rng, i):
    ref_len = rng.choice((0, 1, 1, 2, 3, 3, 4, 5, 6, 8, 12, 20, 35, 60, 100))
    ref = [rng.choice(WORDS) for _ in range(ref_len)]
    kind = rng.choice(("edit", "edit", "edit", "edit", "same", "random", "empty", "short"))
    if kind == "same":
        hyp = list(ref)
    elif kind == "random":
        hyp = [rng.choice(WORDS) for _ in range(rng.randint(1, 20))]
    elif kind == "empty":
        hyp = []
    elif kind == "short":
        hyp = corrupt(rng, ref[:3], rng.randint(0, 1))[:3]
    else:
        hyp = corrupt(rng, ref, rng.randint(1, max(1, ref_len // 3)))
    refs = [ref]
    if rng.random() < 0.25:
        refs.append(corrupt(rng, ref, rng.randint(1, 4)))
        if rng.random() < 0.5:
            refs.append([rng.choice(WORDS) for _ in range(rng.randint(0, 10))])
    return hyp, refs


def main():
    rng = random.Random(SEED)
    sentences = []
    for i in range(120):
        hyp, refs = sentence_case(rng, i)
        v = {
            "hyp": hyp,
            "refs": refs,
            "sentence_bleu": x100(sentence_bleu(refs, hyp, smoothing_function=SMOOTH, auto_reweigh=True)),
        }
        if len(refs) == 1:
            r, h = " ".join(refs[0]), " ".join(hyp)
            v["sentence_chrf_eps"] = x100(sentence_chrf(r, h, beta=2))
            v["counts_chrf"] = sacre_chrf_formula(chrf_counts(r, h, 0))
            v["counts_chrfpp"] = sacre_chrf_formula(chrf_counts(r, h, 2))
        sentences.append(v)

    corpora, differs = [], []
    while len(corpora) < 12:
        size = rng.randint(1, 8)
        segs = [sentence_case(rng, 0) for _ in range(size)]
        hyps = [h for h, _ in segs]
        refs = [r for _, r in segs]
        nltk_bleu = x100(corpus_bleu(refs, hyps, smoothing_function=SMOOTH))
        entry = {"hyps": hyps, "refs": refs, "corpus_bleu": nltk_bleu}
        if min(len(h) for h in hyps) < 4:
            if len(differs) < 6:
                differs.append(entry)
            continue
        if all(len(r) == 1 for r in refs):
            rs = [" ".join(r[0]) for r in refs]
            hs = [" ".join(h) for h in hyps]
            entry["corpus_chrf_macro_eps"] = x100(corpus_chrf(rs, hs, beta=2))
            tot = [[0, 0, 0] for _ in range(6)]
            for r, h in zip(rs, hs):
                for o, st in enumerate(chrf_counts(r, h, 0)):
                    for j in range(3):
                        tot[o][j] += st[j]
            entry["counts_corpus_chrf"] = sacre_chrf_formula(tot)
        corpora.append(entry)

    toks = []
    for i in range(300):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 24)))
        toks.append({"in": text, "out": tokenize_13a(text)})
    for text in ("a..5", "1..2", "x,,y", "U.S.A.", "3.5-4", "&amp;quot;", "a-\nb", "end-\n"):
        toks.append({"in": text, "out": tokenize_13a(text)})

    # One vector per line: readable diffs, no per-token lines.
    def dump(v):
        return json.dumps(v, ensure_ascii=False)

    w = sys.stdout.write
    w("{\n")
    w(' "generator": "metric/testdata/nltk_vectors.py",\n')
    w(' "nltk_version": %s,\n' % dump(nltk.__version__))
    w(' "python_version": %s,\n' % dump(sys.version.split()[0]))
    w(' "seed": %d,\n' % SEED)
    w(' "tolerance": %s,\n' % dump(TOLERANCE))
    sections = (("sentences", sentences), ("corpora", corpora), ("bleu_differs", differs), ("tokenize_13a", toks))
    for i, (key, items) in enumerate(sections):
        w(' "%s": [\n' % key)
        w(",\n".join("  " + dump(v) for v in items))
        w("\n ]%s\n" % ("," if i < len(sections) - 1 else ""))
    w("}\n")


if __name__ == "__main__":
    main()
