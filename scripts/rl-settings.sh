#!/usr/bin/env bash
# rl-settings.sh chooses each RL optimizer's settings on validation problems,
# never on the test problems a verdict reads.
#
# From a finished reproduce run's base policy and calibrated simulator, it
# trains one policy per optimizer × setting against that simulator (the
# method's partner) and plays each against the human proxy on the validation
# slice (problems from 20000, users seeded apart from the test slice's),
# greedy (the policy a user deploys) and sampled at T = 1 (the policy RL
# optimises), the same problems and user seeds for every policy, so that two
# settings are compared problem by problem. settings.md tabulates every run;
# the choice rule is fixed before any run: per optimizer, the highest greedy
# success, ties (within 0.005) broken by sampled success.
#
#   scripts/rl-settings.sh RUN OUT
#
# RUN  a reproduce run folder (checkpoints/base, checkpoints/sim, manifest.json:
#      its task and whether it copied, which the simulator is played with)
# OUT  where checkpoints, evaluations and settings.md go; re-running the same
#      command skips every setting already done (an interrupted training
#      resumes from its last checkpoint)
#
# Environment (defaults in brackets):
#   OPTS     optimizers [grpo rft grpo-greedy-baseline grpo-turn-credit]
#   LRS      learning rates [3e-5 6e-5 1e-4 3e-4]
#   VARIANTS   extra "OPT:LR:GROUP:INSTANCES" settings (group and problems per
#            iteration at one learning rate) []
#   SEED     training and evaluation seed [4]
#   EPISODES validation problems per evaluation [500]
#   PRESET   budget [quick]
set -euo pipefail

if [ $# -ne 2 ]; then
	sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
fi
run=$1 out=$2
for need in "$run/checkpoints/base" "$run/checkpoints/sim" "$run/manifest.json"; do
	[ -e "$need" ] || { echo "rl-settings: $need: not found (RUN must be a finished reproduce run folder)" >&2; exit 1; }
done
# The task and simulator as the run played them: a simulator fitted with
# its ledger (:userledger, reproduce's default) must be played with it, and
# one the run held to its problem's facts (--sim-copy) is played so here.
task=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["task"])' "$run/manifest.json")
user="learned:$run/checkpoints/sim"
if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["config"].get("sim_copy") else 1)' "$run/manifest.json"; then
	user="learned+copy:$run/checkpoints/sim"
fi
OPTS=${OPTS:-grpo rft grpo-greedy-baseline grpo-turn-credit}
LRS=${LRS:-3e-5 6e-5 1e-4 3e-4}
VARIANTS=${VARIANTS:-}
SEED=${SEED:-4}
EPISODES=${EPISODES:-500}
PRESET=${PRESET:-quick}

here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/ckpt" "$out/eval" "$out/metrics" "$out/done"
bin="$out/.calibrl"
(cd "$here" && go build -o "$bin" ./cmd/calibrl)

# algo prints train-policy's flags for optimizer $1.
algo() {
	case $1 in
	grpo) echo "--algo grpo" ;;
	rft) echo "--algo rft" ;;
	grpo-greedy-baseline) echo "--algo grpo --baseline greedy" ;;
	grpo-turn-credit) echo "--algo grpo --turn-credit 2" ;;
	*) echo "rl-settings: unknown optimizer $1" >&2; return 1 ;;
	esac
}

# evaluate plays policy $1 greedy and sampled, into $out/eval/$2.*.json.
evaluate() {
	local agent=$1 name=$2
	"$bin" eval --task "$task" --agent "lm:$agent" --user human --slice validation --preset "$PRESET" -n "$EPISODES" \
		--seed "$SEED" --temperature -1 --json >"$out/eval/$name.greedy.json.tmp"
	"$bin" eval --task "$task" --agent "lm:$agent" --user human --slice validation --preset "$PRESET" -n "$EPISODES" \
		--seed "$SEED" --temperature 1 --json >"$out/eval/$name.sampled.json.tmp"
	mv "$out/eval/$name.greedy.json.tmp" "$out/eval/$name.greedy.json"
	mv "$out/eval/$name.sampled.json.tmp" "$out/eval/$name.sampled.json"
}

# one trains and evaluates optimizer $1 at learning rate $2, with group $3
# and problems per iteration $4 (0: the preset's).
one() {
	local opt=$1 lr=$2 group=$3 inst=$4 name
	name="$opt-lr$lr"
	[ "$group" = 0 ] || name="$name-g$group-i$inst"
	if [ -e "$out/done/$name" ]; then
		echo "rl-settings: $name done"
		return
	fi
	local extra=()
	[ "$group" = 0 ] || extra=(--group "$group" --instances "$inst")
	local start=$SECONDS
	echo "rl-settings: $name: training"
	# shellcheck disable=SC2046
	"$bin" train-policy $(algo "$opt") --task "$task" --preset "$PRESET" --seed "$SEED" --lr "$lr" "${extra[@]}" \
		--init "$run/checkpoints/base" --user "$user" \
		--out "$out/ckpt/$name" --metrics "$out/metrics/$name.jsonl" >/dev/null
	local trained=$((SECONDS - start))
	evaluate "$out/ckpt/$name" "$name"
	echo "{\"train_s\": $trained}" >"$out/done/$name"
	echo "rl-settings: $name: ${trained}s training"
}

[ -e "$out/done/base" ] || { evaluate "$run/checkpoints/base" base && echo '{}' >"$out/done/base"; }
for opt in $OPTS; do
	for lr in $LRS; do
		one "$opt" "$lr" 0 0
	done
done
for s in $VARIANTS; do
	IFS=: read -r opt lr group inst <<<"$s"
	one "$opt" "$lr" "$group" "$inst"
done

python3 - "$out" <<'EOF'
import json, os, sys
out = sys.argv[1]
def load(name, dec):
    with open(os.path.join(out, "eval", f"{name}.{dec}.json")) as f:
        return json.load(f)
names = sorted(n for n in os.listdir(os.path.join(out, "done")) if n != "base")
base_g, base_s = load("base", "greedy"), load("base", "sampled")
rows, best = [], {}
for n in names:
    g, s = load(n, "greedy"), load(n, "sampled")
    with open(os.path.join(out, "done", n)) as f:
        t = json.load(f)["train_s"]
    opt = n.split("-lr")[0]
    rows.append((opt, n, g["success"], s["success"], g["success_ci95"], s["success_ci95"], t))
    key = (round(g["success"] / 0.005), s["success"])
    if opt not in best or key > best[opt][0]:
        best[opt] = (key, n)
lines = ["# RL settings chosen on validation problems", "",
         f"Each policy trained from the run's base against its calibrated simulator, then played against the human proxy on {base_g['episodes']} validation problems (seed {base_g['seed']}), greedy and sampled at T = 1. The choice per optimizer (bold): highest greedy success, ties within 0.005 broken by sampled success.", "",
         f"The base: greedy {base_g['success']:.3f}, sampled {base_s['success']:.3f}.", "",
         "| optimizer | setting | greedy | 95% CI | sampled | 95% CI | greedy − base | training s |",
         "| --- | --- | ---: | --- | ---: | --- | ---: | ---: |"]
for opt, n, g, s, gci, sci, t in rows:
    mark = "**" if best[opt][1] == n else ""
    lines.append(f"| {opt} | {mark}{n[len(opt)+1:]}{mark} | {g:.3f} | [{gci[0]:.3f}, {gci[1]:.3f}] | {s:.3f} | [{sci[0]:.3f}, {sci[1]:.3f}] | {g-base_g['success']:+.3f} | {t} |")
tmp = os.path.join(out, "settings.md.tmp")
with open(tmp, "w") as f:
    f.write("\n".join(lines) + "\n")
os.replace(tmp, os.path.join(out, "settings.md"))
print("\n".join(lines))
EOF
