# Sourced by the results folders' run scripts: ev NAME AGENTDIR TEMPERATURE
# plays the first 500 problems of $SLICE (test: the verdict's; validation:
# for choosing settings) against the human proxy with $B (calibrl), writing
# eval-NAME-TTEMPERATURE.json and its episodes, unless that file is there.
ev() {
  [ -s eval-$1-T$3.json ] && return
  $B eval --task mathchat --agent lm:$2 --user human -n 500 --slice ${SLICE:?test or validation} --seed 1 --temperature $3 --json --episodes-out eval-$1-T$3.episodes.jsonl > eval-$1-T$3.json.tmp && mv eval-$1-T$3.json.tmp eval-$1-T$3.json
}
