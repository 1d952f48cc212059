"""This run (commit 988bede: the head on the predictions a trainer reads,
bf16 caches sharing by copy, which may not change a bit of an fp32 run)
against the same command on commit 9140005 (../mathchat-quick-share/, run
the session before on the same kind of machine). Run from this folder:
python3 compare.py (RUN=the run folder, while its episodes are there,
rebuilds successes.json from them).

First whether every evaluation and sim-to-real conversation succeeded on
the same problems and the summaries and report are byte-identical; then
the stage groups' wall and CPU seconds of both runs. The 8f05f75 binary
writes no stage profile."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import print_run_against  # noqa: E402

if __name__ == '__main__':
    print_run_against(here, os.path.join('..', 'mathchat-quick-share'), '9140005', '988bede')
