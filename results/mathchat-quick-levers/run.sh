#!/bin/bash
# RL settings study: the oracle arm (GRPO against the human proxy) from pipeline 1's base,
# 60 iterations (2x quick), one lever changed at a time; every policy evaluated on the
# first 500 validation problems, greedy and sampled (and at its rollout temperature).
set -u
B=calibrl
BASE=${BASE:?the base checkpoint of mathchat-quick-pipelines seed 1}
SLICE=validation
. "$(dirname "$0")/../evaluate.sh"
cd "${OUT:-.}"
ev base $BASE 0; ev base $BASE 1
while read name flags; do
  [ -z "$name" ] && continue
  if [ ! -f $name/done ]; then
    /usr/bin/time -v $B train-policy --algo grpo --task mathchat --preset quick --user human --init $BASE --seed 1 --steps 60 $flags --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
  fi
  ev $name $name 0; ev $name $name 1
  case "$flags" in *temperature*) ev $name $name 0.7; ev base $BASE 0.7;; esac
done <<'LIST'
default
beta0 --beta 0
beta01 --beta 0.01
temp07 --temperature 0.7
group16 --group 16 --instances 4
inst16 --instances 16
seqmean --loss-mean sequence
LIST
echo ALLDONE
