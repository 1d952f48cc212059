#!/bin/bash
# Second batch, with the trainer that scores tempered rollouts at their temperature (commit after the first batch).
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
temp07t 0.7 --temperature 0.7
temp05t 0.5 --temperature 0.5
inst32 1 --instances 32
LIST
echo ALLDONE
