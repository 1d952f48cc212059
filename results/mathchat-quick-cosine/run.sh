#!/bin/bash
# The cosine learning-rate schedule, chosen on validation problems
# (mathchat-quick-levers/run4.sh), on the untouched test slice over three whole
# pipelines: per pipeline seed S, its base (P_S/checkpoints/base, a finished
# `calibrl reproduce --task mathchat --preset quick --seed S` folder) trained 60
# iterations with `--lr-schedule cosine` against the human proxy (oracle arm) and
# against the pipeline's simulator (calibrated arm), RL seed S; the base and both
# policies on the first 500 test problems (eval's test slice, the verdict's), greedy
# and sampled at T = 1. pooled.py pools them (pipelines, then problems).
set -u
B=${B:-calibrl}
SLICE=test
. "$(dirname "$0")/../evaluate.sh"
cd "${OUT:-.}"
for S in ${SEEDS:-1 2 3}; do
  P=$(eval echo \${P_$S:?the run folder of pipeline $S})
  ev base-s$S $P/checkpoints/base 0; ev base-s$S $P/checkpoints/base 1
  for arm in oracle calibrated; do
    user=human; [ $arm = calibrated ] && user=learned:$P/checkpoints/sim
    name=$arm-cosine-s$S
    if [ ! -f $name/done ]; then
      /usr/bin/time -v $B train-policy --algo grpo --task mathchat --preset quick --user $user --init $P/checkpoints/base \
        --seed $S --steps 60 --lr-schedule cosine --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
    fi
    ev $name $name 0; ev $name $name 1
  done
done
echo ALLDONE
