#!/bin/bash
# Third batch: the one lever with a trend (prompts per iteration: 8, 16, 32 gave greedy 0.668, 0.684, 0.692), doubled again.
set -u
B=calibrl
BASE=${BASE:?the base checkpoint of mathchat-quick-pipelines seed 1}
SLICE=validation
. "$(dirname "$0")/../evaluate.sh"
cd "${OUT:-.}"
while read name temp flags; do
  [ -z "$name" ] && continue
  if [ ! -f $name/done ]; then
    /usr/bin/time -v $B train-policy --algo grpo --task mathchat --preset quick --user human --init $BASE --seed 1 --steps 60 $flags --out $name --metrics $name.metrics.jsonl > $name.log 2>&1 && touch $name/done
  fi
  ev $name $name 0; ev $name $name 1
  if [ "$temp" != "1" ]; then ev $name $name $temp; ev base $BASE $temp; fi
done <<'LIST'
inst64 1 --instances 64
LIST
echo ALLDONE
