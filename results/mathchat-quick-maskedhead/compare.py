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
from pairing import print_identity, print_stage_table, stage_groups  # noqa: E402

OLD = os.path.join(here, '..', 'mathchat-quick-share')
RUN = os.environ.get('RUN', here)  # the run folder, for the episodes


def main():
    print_identity(OLD, RUN, '9140005', [(name, OLD) for name in ('summary.json', 'summary-greedy.json', 'report.md')], here)
    print('\nStage groups, wall and CPU seconds (stages.json; stages side by side count twice):\n')
    print_stage_table([('9140005', stage_groups(OLD)), ('988bede', stage_groups(RUN))])


if __name__ == '__main__':
    main()
