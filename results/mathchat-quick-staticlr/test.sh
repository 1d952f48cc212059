#!/bin/bash
# Static context RL (outcome reward) at its validated learning rate, 2e-5, with the
# token-matched budget, on the untouched test slice of three pipelines: per pipeline
# seed S (P_S a quick reproduce folder of seed S with its logs, base and simulator)
# the static arm with RL seed S, it and the base on the first 500 test problems,
# greedy and T = 1. test.py pools the differences with the base.
set -u
B=${B:-calibrl}
SLICE=test
. "$(dirname "$0")/../evaluate.sh"
cd "${OUT:-.}"
for S in ${SEEDS:-1 2 3}; do
  P=$(eval echo \${P_$S:?the run folder of pipeline $S})
  ev base-s$S $P/checkpoints/base 0; ev base-s$S $P/checkpoints/base 1
  name=static-lr2e-5-s$S
  if [ ! -f $name/done ]; then
    /usr/bin/time -v $B train-policy --algo static --task mathchat --preset quick --static-reward outcome \
      --instances 21 --static-fill 8 --static-tokens 4000 --lr 2e-5 --seed $S \
      --user learned:$P/checkpoints/sim --logs $P/logs.jsonl --init $P/checkpoints/base \
      --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
  fi
  ev $name $name 0; ev $name $name 1
done
echo ALLDONE
