"""This run (commit 2ad5315: the sampler's lanes, its top-p cut and the
copy rule's sorted ids, none of which may change a bit) against the same
command on commit 4a871b7 (../mathchat-quick-ragged/: its successes and
summaries are that folder's, which 4a871b7 reproduced exactly). Run from
this folder: python3 compare.py (RUN=the run folder, while its episodes
are there, rebuilds successes.json from them).

First whether every evaluation and sim-to-real conversation succeeded on
the same problems and the summaries and report are byte-identical; then
the stage groups' wall and CPU seconds of 4a871b7's run, 97f547c's (the
same code as this one, run earlier the same day) and this run's. The
8f05f75 binary writes no stage profile."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..'))
from pairing import print_identity, print_stage_table, stage_groups  # noqa: E402

OLD = os.path.join(here, '..', 'mathchat-quick-ragged')
RUN = os.environ.get('RUN', here)  # the run folder, for the episodes


def main():
    # 4a871b7's report differs from e5c8f3c's (the folder's) in the command it suggests
    print_identity(OLD, RUN, '4a871b7', (('summary.json', OLD), ('summary-greedy.json', OLD), ('report.md', os.path.join(OLD, '4a871b7'))), here)
    print('\nStage groups, wall and CPU seconds (stages.json; stages side by side count twice):\n')
    print_stage_table([('4a871b7', stage_groups(os.path.join(OLD, '4a871b7'))),
                       ('97f547c', stage_groups(os.path.join(here, '97f547c'))), ('2ad5315', stage_groups(here))])


if __name__ == '__main__':
    main()
