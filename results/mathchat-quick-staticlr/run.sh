#!/bin/bash
# Static context RL's own learning rate, chosen on validation problems: both static
# rewards at the quick preset's RL learning rate (6e-5), a third of it and three times
# it, with the token-matched budget of mathchat-quick-pipelines-tokens (21 prompts per
# round, up to 8 rounds, filled to 4000 gradient tokens), from one pipeline's base and
# simulator (P: a finished `reproduce --task mathchat --preset quick --seed S` folder);
# every policy on the first 500 validation problems (eval --slice validation: problems
# and user seeds apart from the test slice), greedy and sampled at T = 1.
set -u
B=${B:-calibrl}
P=${P:?a finished quick reproduce folder (checkpoints/base, checkpoints/sim, logs.jsonl)}
S=${S:?the seed of that folder}
SLICE=validation
. "$(dirname "$0")/../evaluate.sh"
cd "${OUT:-.}"
ev base $P/checkpoints/base 0; ev base $P/checkpoints/base 1
for reward in outcome continuation; do
  for lr in 2e-5 6e-5 1.8e-4; do
    name=$reward-lr$lr
    if [ ! -f $name/done ]; then
      /usr/bin/time -v $B train-policy --algo static --task mathchat --preset quick --static-reward $reward \
        --instances 21 --static-fill 8 --static-tokens 4000 --lr $lr --seed $S \
        --user learned:$P/checkpoints/sim --logs $P/logs.jsonl --init $P/checkpoints/base \
        --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
    fi
    ev $name $name 0; ev $name $name 1
  done
done
echo ALLDONE
