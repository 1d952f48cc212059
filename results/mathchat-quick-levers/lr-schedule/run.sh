#!/bin/bash
# The learning-rate schedule lever: 60 iterations with the preset's constant rate and
# with a cosine decay to a tenth (train-policy --lr-schedule cosine), from one
# pipeline's base (BASE), each evaluated on the first 500 validation
# problems, greedy and sampled. Constant-rate runs of their own, so each pair shares its
# base, user and RL seed: the oracle arm (user human) at two RL seeds.
set -u
B=${B:-calibrl}
BASE=${BASE:?a quick base checkpoint}
SLICE=validation
. "$(dirname "$0")/../../evaluate.sh"
cd "${OUT:-.}"
ev base $BASE 0; ev base $BASE 1
while read name user seed flags; do
  [ -z "$name" ] && continue
  if [ ! -f $name/done ]; then
    /usr/bin/time -v $B train-policy --algo grpo --task mathchat --preset quick --user $user --init $BASE --seed $seed --steps 60 $flags --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
  fi
  ev $name $name 0; ev $name $name 1
done <<'LIST'
default human 2
cosine human 2 --lr-schedule cosine
default-s3 human 3
cosine-s3 human 3 --lr-schedule cosine
LIST
echo ALLDONE
