"""Pools test.sh's runs over pipelines: static context RL (outcome reward)
at its validated learning rate minus each pipeline's base, on the same 500
test problems with the same user seeds, per pipeline and pooled
(pairing.pooled_table: a two-level bootstrap, pipelines then problems),
Bonferroni over the 2 claims (greedy, T = 1). Run in test.sh's folder
(successes from its eval-*.episodes.jsonl) or here (test-successes.json)."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from pairing import pooled_table, successes  # noqa: E402

pooled_table(successes('test-successes.json'), ['static-lr2e-5'])
