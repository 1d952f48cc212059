// Package metric holds the text metrics that score a document against a
// target — BLEU and chrF, both compatible with sacreBLEU 2.x — the
// confidence intervals that the evaluator reports around success rates and
// mean rewards, and the paired bootstrap ([PairedBootstrap]) that compares
// two arms evaluated on the same problems.
//
// BLEU (Papineni et al. 2002, "BLEU: a Method for Automatic Evaluation of
// Machine Translation") follows sacreBLEU's metrics/bleu.py: the 13a
// tokeniser of mteval-v13a.pl (see [Tokenize13a]), word n-grams up to 4,
// clipped counts against the element-wise maximum over references, the
// closest reference length (ties go to the shorter one), the brevity penalty
// exp(1 − r/c), and the smoothing methods of Chen & Cherry 2014 ("A
// Systematic Comparison of Smoothing Techniques for Sentence-Level BLEU"):
// 'exp' (NIST geometric, sacreBLEU's default), 'floor', 'add-k' and 'none'.
// Corpus BLEU sums the statistics over segments before scoring; sentence
// BLEU uses sacreBLEU's sentence_bleu defaults ('exp' smoothing and
// effective order).
//
// chrF (Popović 2015, "chrF: character n-gram F-score for automatic MT
// evaluation"; β = 2 from Popović 2016, "chrF deconstructed") follows
// sacreBLEU's metrics/chrf.py: character n-grams up to 6 with whitespace
// removed, optional word n-grams (chrF++ with word order 2), and by default
// the effective-order average of precision and recall that sacreBLEU uses
// unless eps_smoothing is set.
//
// A document is scored as one segment: 13a turns its newlines into spaces
// (joining a word hyphenated across a line break), so SentenceBLEU(doc,
// target) is sacrebleu.sentence_bleu(doc, [target]).score.
//
// All scores are on a 0–100 scale and never NaN. Degenerate inputs follow
// sacreBLEU exactly: an empty hypothesis, an empty reference, or both empty
// score 0; identical non-empty texts score 100 with the sentence defaults.
// Corpus BLEU without effective order scores a corpus of one-word segments
// 0 (there are no 2-grams), as sacreBLEU does.
//
// The test vectors in testdata/ come from NLTK (testdata/nltk_vectors.py)
// and from sacreBLEU's own published test cases; the tests need no Python.
package metric
