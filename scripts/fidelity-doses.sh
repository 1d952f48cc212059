#!/usr/bin/env bash
# fidelity-doses.sh runs the fidelity dose-response study: does a policy
# trained against a closer simulator do better with real users?
#
# For each finished reproduce run (one pipeline: its logs, tokenizer, base
# policy and calibrated simulator) it makes simulators of graded fidelity
# from existing knobs, measures each one's per-history fidelity to the
# human proxy (validation conversations), trains one policy against each
# with each optimizer from the pipeline's base, and plays every policy
# against the human proxy on the test problems, read once, at the preset's
# turn limit, greedy (as deployed) and sampled at T = 1. doses.md regresses
# success on fidelity with the pipeline as a random effect
# (go run ./scripts/fidelitydoses OUT).
#
#   scripts/fidelity-doses.sh OUT RUN...
#
# OUT  the study's folder: OUT/seed-S/ per pipeline (S from the run's
#      manifest), OUT/doses.md and the figure. Re-running the same command
#      skips everything already done (an interrupted training resumes from
#      its last checkpoint).
# RUN  reproduce run folders (checkpoints/base, checkpoints/sim, logs.jsonl,
#      tokenizer.json), at least 2 for the regression's interval
#
# The simulators (fixed before any run, every one in every pipeline):
#   naive-0x     the naive simulator with neither leaks nor sycophancy
#   naive-1x     the naive simulator as the task defines it
#   naive-2x     the naive simulator at twice its leak and sycophancy rates
#   learned-1of3 the learned simulator fitted a third of the preset's steps
#                (quick: 500 of 1500) on the same logs, tokenizer and seed:
#                a shorter fit, not a checkpoint of the longer one
#   learned-2of3 fitted two thirds of them (quick: 1000)
#   learned      the pipeline's calibrated simulator (all of them)
#   ledger       fitted all of them with its own ledger (:userledger),
#                which copies the facts it holds more exactly
#   copy         the calibrated simulator stating only numbers its problem
#                holds (learned+copy:DIR): the same weights, decoding
#                constrained
#
# Environment (defaults in brackets):
#   SIMS      the simulators [all eight above]
#   OPTS      optimizers, at the preset's rates chosen on validation [grpo rft]
#   EPISODES  test problems per evaluation [500]
#   PRESET    budget [quick]
#   MAXTURNS  turn limit of every episode: the preset's, the verdict's [6]
#   SIMSTEPS  the preset's simulator SFT steps [1500]
#   CALIBRL   the calibrl binary to run [built from this checkout into
#             OUT/.calibrl]: name one to add simulators to a study while
#             another pipeline's run still uses OUT/.calibrl
set -euo pipefail

if [ $# -lt 2 ]; then
	sed -n '2,/^set -e/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 2
fi
out=$1
shift
SIMS=${SIMS:-naive-0x naive-1x naive-2x learned-1of3 learned-2of3 learned ledger copy}
OPTS=${OPTS:-grpo rft}
EPISODES=${EPISODES:-500}
PRESET=${PRESET:-quick}
MAXTURNS=${MAXTURNS:-6}
SIMSTEPS=${SIMSTEPS:-1500}

here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
bin=${CALIBRL:-}
if [ -z "$bin" ]; then
	bin="$out/.calibrl"
	(cd "$here" && go build -o "$bin" ./cmd/calibrl)
fi

for run in "$@"; do
	for need in "$run/checkpoints/base" "$run/checkpoints/sim" "$run/logs.jsonl" "$run/tokenizer.json" "$run/manifest.json"; do
		[ -e "$need" ] || { echo "fidelity-doses: $need: not found (RUN must be a finished reproduce run folder)" >&2; exit 1; }
	done
	# The study adds the ledger and the copy as doses of its own, to a
	# simulator fitted without them.
	if [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["task"])' "$run/manifest.json")" != mathchat ]; then
		echo "fidelity-doses: $run: want a mathchat run fitted without the ledger (reproduce --sim-ledger=false --sim-copy=false)" >&2
		exit 1
	fi
done

# seed_of prints the seed in run $1's manifest.
seed_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seed"])' "$1/manifest.json"
}

# task_of prints the task simulator $1 is trained and played in: the task
# options that make it (naive doses, the ledger's notes); the human proxy
# plays the same in every one of them.
task_of() {
	case $1 in
	naive-0x) echo "mathchat:leak=0x:syc=0x" ;;
	naive-2x) echo "mathchat:leak=2x:syc=2x" ;;
	ledger) echo "mathchat:userledger" ;;
	*) echo "mathchat" ;;
	esac
}

# user_of prints simulator $1's user spec in pipeline $2 ($3 its study folder).
user_of() {
	case $1 in
	naive-*) echo "naive" ;;
	learned) echo "learned:$2/checkpoints/sim" ;;
	copy) echo "learned+copy:$2/checkpoints/sim" ;;
	learned-* | ledger) echo "learned:$3/sims/$1" ;;
	*) echo "fidelity-doses: unknown simulator $1" >&2; return 1 ;;
	esac
}

# steps_of prints the SFT steps of a simulator this study fits.
steps_of() {
	case $1 in
	learned-1of3) echo $((SIMSTEPS / 3)) ;;
	learned-2of3) echo $((2 * SIMSTEPS / 3)) ;;
	ledger) echo "$SIMSTEPS" ;;
	esac
}

# algo prints train-policy's flags for optimizer $1.
algo() {
	case $1 in
	grpo) echo "--algo grpo" ;;
	rft) echo "--algo rft" ;;
	*) echo "fidelity-doses: unknown optimizer $1" >&2; return 1 ;;
	esac
}

# evaluate plays policy $1 greedy and sampled against the human proxy into
# $2.greedy.json and $2.sampled.json.
evaluate() {
	local agent=$1 file=$2 seed=$3 dec temp
	for dec in greedy sampled; do
		[ -e "$file.$dec.json" ] && continue
		temp=-1
		[ $dec = sampled ] && temp=1
		"$bin" eval --task mathchat --agent "lm:$agent" --user human --preset "$PRESET" -n "$EPISODES" \
			--seed "$seed" --max-turns "$MAXTURNS" --temperature "$temp" --json >"$file.$dec.json.tmp"
		mv "$file.$dec.json.tmp" "$file.$dec.json"
	done
}

for run in "$@"; do
	seed=$(seed_of "$run")
	dir="$out/seed-$seed"
	mkdir -p "$dir/sims" "$dir/fidelity" "$dir/ckpt" "$dir/eval" "$dir/metrics" "$dir/log"
	echo "$run" >"$dir/run"
	evaluate "$run/checkpoints/base" "$dir/eval/base" "$seed"
	for sim in $SIMS; do
		steps=$(steps_of "$sim")
		if [ -n "$steps" ] && [ ! -e "$dir/sims/$sim/calibrl.json" ]; then
			echo "fidelity-doses: seed $seed: fitting $sim ($steps steps)"
			"$bin" train-sim --task "$(task_of "$sim")" --logs "$run/logs.jsonl" --tokenizer "$run/tokenizer.json" \
				--preset "$PRESET" --seed "$seed" --steps "$steps" --select nll --out "$dir/sims/$sim" \
				>"$dir/log/sim-$sim.log" 2>&1
		fi
		user=$(user_of "$sim" "$run" "$dir")
		if [ ! -e "$dir/fidelity/$sim.json" ]; then
			echo "fidelity-doses: seed $seed: fidelity of $sim"
			# The base's gap and the probes on validation problems; the
			# per-history fidelity on validation conversations.
			"$bin" fidelity --task "$(task_of "$sim")" --sim "$user" --agents "lm:$run/checkpoints/base" --temperature 1 \
				--slice validation -n 200 --seed "$seed" --max-turns "$MAXTURNS" --json >"$dir/fidelity/$sim.json.tmp"
			mv "$dir/fidelity/$sim.json.tmp" "$dir/fidelity/$sim.json"
		fi
		for opt in $OPTS; do
			name="$sim-$opt"
			if [ ! -e "$dir/ckpt/$name/done" ]; then
				echo "fidelity-doses: seed $seed: training $name"
				start=$SECONDS
				# shellcheck disable=SC2046
				"$bin" train-policy $(algo "$opt") --task "$(task_of "$sim")" --preset "$PRESET" --seed "$seed" \
					--init "$run/checkpoints/base" --user "$user" --out "$dir/ckpt/$name" \
					--metrics "$dir/metrics/$name.jsonl" >"$dir/log/train-$name.log" 2>&1
				echo "{\"train_s\": $((SECONDS - start))}" >"$dir/ckpt/$name/done"
			fi
			mkdir -p "$dir/eval/$sim"
			evaluate "$dir/ckpt/$name" "$dir/eval/$sim/$opt" "$seed"
		done
	done
done

(cd "$here" && go run ./scripts/fidelitydoses "$out")
