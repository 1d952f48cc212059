"""Pools the cosine study over pipelines: for each arm and decoding, the
arm minus its pipeline's base on the same 500 test problems with the same
user seeds, per pipeline and pooled (pairing.pooled_table: a two-level
bootstrap, pipelines then problems), Bonferroni over the 4 claims (2 arms
x 2 decodings): 98.75% intervals. successes.json holds each evaluation's
per-problem success; it is rebuilt from eval-*.episodes.jsonl when those
exist in the working folder."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import pooled_table, successes  # noqa: E402

pooled_table(successes(), ['oracle-cosine', 'calibrated-cosine'])
