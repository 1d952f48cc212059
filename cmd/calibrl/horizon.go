package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/horizon"
	"github.com/calibrl/calibrl/preset"
)

func newHorizonCmd() *cobra.Command {
	def := horizon.DefaultSyntheticConfig()
	var (
		synthetic  bool
		asJSON     bool
		horizons   string
		out        string
		task       string
		presetName string
		iterations int
		rlSeeds    int
		jobs       int
		seeds      seedList
		cfg        = def
	)
	cmd := &cobra.Command{
		Use:   "horizon --synthetic [flags]",
		Short: "How each training regime's gap to real users grows with conversation length",
		Long: `horizon measures how far a training regime falls behind the oracle as the
conversation gets longer, and checks it against the bounds the method rests on.

Static training on logged conversations never shows the policy the states its
own mistakes create: an error at turn t (turns numbered 0..H-1) can spoil that
turn and every later one, so the gap is bounded by R_max·Σ_t (H−t)·ε_t, which
is O(H²ε) (Ross & Bagnell 2010). Interactive training on the policy's own
states teaches it to recover, so each error costs a bounded number of turns:
O(Hε). A simulator whose reply at turn t is off by total variation δ_t moves
the objective by up to R_max·Σ_t (H−t)·δ_t = O(H²δ), which is why the
simulator is calibrated against real people.

--synthetic runs a controlled dialogue MDP with no learning in the loop: the
policy's per-turn error ε and the simulator's per-turn error δ are injected
exactly, and every gap is computed by exact dynamic programming (a Monte Carlo
run with standard errors cross-checks it). It prints, per horizon, the static,
interactive and simulator-induced gaps beside their bounds; the least-squares
slope of log(gap) on log(H) with its 95% confidence interval (≈2 where errors
compound, ≈1 where they are corrected on-policy); and a position experiment
that injects a single error at each turn i and correlates its cost with H − i.
Over short horizons the compounding slopes sit below 2 (about 1.8 for the
defaults): Σ_t (H−t) = H(H+1)/2 has a linear term, and a policy already lost
cannot lose a turn twice, so the gap saturates as Hε grows. Long horizons with
small errors (--horizons 16,32,64,128 --eps 1e-4 --delta 1e-4) show the limit.

Without --synthetic, horizon trains and evaluates the real arms at each H.
First one base policy and one calibrated simulator are trained on logs that
mix every horizon (--out/shared/), so that between horizons only H changes.
Then, per horizon (--out/hH/, each resumable), the static, naive, calibrated
and oracle arms are trained from that base with the preset's RL budget and
RL seeds on the task grown to need about H turns (mathchat:hH: shopping
problems that withhold about 3H/4 numbers, the careful agent playing 2.0,
3.2, 6.5 and 13.1 turns at H = 2, 4, 8, 16; docedit:hH: more edits) with a
turn limit of H; past H = 8 the models read 1024 tokens instead of 512. It
reports each regime's gap to the oracle-interactive arm against the human
proxy (paired by problem and user seed, averaged over RL seeds, with a
bootstrap 95% interval), the oracle arm's success per H, the log-log slope
of the gap with its 95% interval where at least three gaps are positive,
and a plot with the synthetic study's lines at the same horizons beside the
arms. A slope says how fast a gap grows, not whether it stays under the
bound, so the report also sets each arm's gap, sampled and greedy, beside
R_max·Σ_t (H−t)·δ_t computed from that arm's own measured δ_t (the
simulator against the human proxy in the arm's conversations, which each
run's fidelity stage measures for user turns 0..5, sampled only; later
turns carry δ_5, and the table marks those bounds), with R_max = 1 since
rewards lie in [0, 1]; the gap normalised by the oracle's lead over the
base at that H (n/a at a lead of 0.02 or less); and whether the gap
respects the bound. A panel of the plot draws each arm's gap with its
interval and its bound, dashed, against H. After every finished H it
writes report.md and result.json with the horizons so far (and names those
left), so an interrupted study shows what it measured and the same command
goes on from there. The study is several
quick reproduce runs: expect an hour or two on 2 cores. Measured, with two
jobs: --task mathchat:ledger 56 min in all (logs, base and simulator 15 min,
then 4, 6, 10 and 22 min at H = 2, 4, 8, 16; peak RSS 14.6 GB); plain
mathchat, whose longer conversations the past-H = 4 base cannot solve, 2 h 8
min (57 min, then 12, 13, 19 and 27), where two sim-to-real gap stages side
by side peak at 14.8 GB: --jobs 1 on a machine with less than 24 GB.

One study trains its logs, base and simulator once, so its intervals do
not cover that training. --seeds 1,2,3 runs the whole study once per seed
into OUT/seed-S/ (each laid out as a single study and resumable on its own, so a
call with other seeds reuses the folders it shares and pools the seeds it
is given), then writes OUT/report.md, result.json and the plot: per H and
arm the gap averaged over seeds with a two-level bootstrap interval (seeds,
then problems, as reproduce --pipelines pools), each seed's gap, and the
bound per seed and averaged. It costs the single study's time once per
seed. At least two horizons are needed (three for a slope).

--task mathchat:ledger gives every H the ledger (a note after each reply of
the numbers still missing and the next to ask for, then the answer they
make): the bookkeeping the embedded base needs past H = 4.
--task mathchat:ledger:userledger also gives the learned simulator its own
ledger: after each agent turn that asks for a withheld number, a note to the
simulator alone of that statement with its true number ("Asked about: Each
pen costs $1."), so it copies one number from the line before its reply
instead of finding it among up to eleven in its oracle context (without it
the simulator's numbers make the right answer in 1 of 195 conversations at
H = 8). The simulator is fitted and played with the notes; its calibrl.json
records them, and a simulator is refused on a task whose notes it was not
fitted with.`,
		Example: `  calibrl horizon --synthetic
  calibrl horizon --synthetic --horizons 2,4,8,16,32 --eps 0.01 --delta 0.05
  calibrl horizon --synthetic --json --out runs/horizon-synthetic
  calibrl horizon --task mathchat --preset quick --horizons 2,4,8,16 --out runs/horizon-quick
  calibrl horizon --task mathchat:ledger --preset quick --horizons 2,4,8,16 --out runs/horizon-ledger
  calibrl horizon --task mathchat:ledger --preset quick --horizons 2,4,8,16 --seeds 1,2,3 --out runs/horizon-ledger-seeds
  calibrl horizon --task mathchat:ledger:userledger --preset quick --horizons 2,4,8,16 --out runs/horizon-userledger`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hs, err := horizon.ParseHorizons(horizons)
			if err != nil {
				return err
			}
			if !synthetic {
				if err := checkJobs(jobs); err != nil {
					return err
				}
				return runLearnedHorizon(cmd, task, presetName, iterations, rlSeeds, jobs, hs, cfg.Seed, seeds, out, asJSON)
			}
			if len(seeds) > 0 {
				return fmt.Errorf("--seeds %s: the synthetic study has no training to repeat (its Monte Carlo seed is --seed)", seeds.String())
			}
			cfg.Horizons = hs
			res, err := horizon.RunSynthetic(cfg)
			if err != nil {
				return err
			}
			if out != "" {
				if err := res.WriteDir(out); err != nil {
					return err
				}
			}
			if asJSON {
				return res.WriteJSON(cmd.OutOrStdout())
			}
			if err := res.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "\nwrote %s/report.md and %s/%s.png, .svg\n", out, out, horizon.PlotName)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&synthetic, "synthetic", false, "run the controlled synthetic study (no learning in the loop)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object instead of the tables")
	f.StringVar(&horizons, "horizons", "2,4,8,16", "comma-separated horizons H (turns), at least three distinct values (two for the learned-model study, which fits no slope below three)")
	f.Float64Var(&cfg.Eps, "eps", def.Eps, "learned policy's error probability ε per turn")
	f.Float64Var(&cfg.Delta, "delta", def.Delta, "simulator's total-variation error δ per turn")
	f.Float64Var(&cfg.RMax, "r-max", def.RMax, "reward of one turn that ends on track")
	f.IntVar(&cfg.Recovery, "recovery", def.Recovery, "extra turns an interactive policy spends repairing its own error (0: it costs its own turn only)")
	f.IntVar(&cfg.PositionH, "position-h", def.PositionH, "horizon of the position experiment (0: the largest of --horizons)")
	f.IntVar(&cfg.Episodes, "episodes", def.Episodes, "Monte Carlo episodes per horizon for the cross-check (0: skip)")
	f.Uint64Var(&cfg.Seed, "seed", def.Seed, "seed of the Monte Carlo cross-check, or of every run of the learned study")
	f.StringVar(&out, "out", "", "also write report.md, result.json and "+horizon.PlotName+".png/.svg into this folder")
	f.StringVar(&task, "task", "mathchat", "task of the learned-model study, optionally with an option for every H: mathchat:ledger (the ledger of the numbers told), mathchat:ledger:userledger (and the simulator's own ledger) or mathchat:nocalc")
	f.StringVar(&presetName, "preset", "quick", "budget preset of the learned-model study: tiny, quick, standard, paper")
	f.IntVar(&iterations, "iterations", 0, "RL iterations of every arm at every H in the learned-model study (0: the preset's)")
	f.IntVar(&rlSeeds, "rl-seeds", 0, "RL seeds per arm at every H in the learned-model study (default: the preset's, quick 3; each H's folder keeps the count it was started with); with --seeds the pooled interval's first level is the top-level seeds, so 1 suffices there")
	f.Var(&seeds, "seeds", "comma-separated top-level seeds of the learned-model study (at least 2): the whole study once per seed into OUT/seed-S/, pooled into OUT/report.md; replaces --seed")
	f.IntVar(&jobs, "jobs", 0, "independent stages of the learned-model study run side by side, as reproduce --jobs (0: min(2, cores)); results do not depend on it")
	return cmd
}

// runLearnedHorizon runs the learned-model study, once or once per seed.
func runLearnedHorizon(cmd *cobra.Command, taskName, presetName string, iterations, rlSeeds, jobs int, hs []int, seed uint64, seeds seedList, out string, asJSON bool) error {
	p, err := preset.Get(presetName)
	if err != nil {
		return err
	}
	if iterations < 0 {
		return fmt.Errorf("--iterations %d: want ≥ 0", iterations)
	}
	if iterations > 0 {
		p = p.WithRLIterations(iterations)
	}
	if err := setRLSeeds(cmd, rlSeeds, &p); err != nil {
		return err
	}
	cfg := horizon.LearnedConfig{Task: taskName, Preset: p, Horizons: hs, Seed: seed, Out: out, Log: slog.Default(), Jobs: jobs}
	if len(seeds) > 0 {
		return runLearnedSeeds(cmd, cfg, seeds, asJSON)
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("runs", fmt.Sprintf("horizon-%s-%s-seed%d", taskName, p.Name, seed))
	}
	out = cfg.Out
	res, err := horizon.RunLearned(cmd.Context(), cfg)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(out, "report.md"))
	for _, a := range res.Arms {
		if a.Fit != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "%-24s slope %.3f [%.3f, %.3f]  gaps %v\n", a.Arm, a.Fit.Slope, a.Fit.SlopeLo, a.Fit.SlopeHi, a.Gap)
		} else {
			fmt.Fprintf(cmd.OutOrStdout(), "%-24s %s  gaps %v\n", a.Arm, a.Note, a.Gap)
		}
	}
	return nil
}

// runLearnedSeeds runs the learned-model study once per seed and pools
// them. The folder is --out, or runs/horizon-TASK-PRESET-seeds-S1-S2-...;
// each seed's study is seed-S inside it.
func runLearnedSeeds(cmd *cobra.Command, cfg horizon.LearnedConfig, seeds seedList, asJSON bool) error {
	if cfg.Out == "" {
		cfg.Out = filepath.Join("runs", fmt.Sprintf("horizon-%s-%s-seeds-%s", cfg.Task, cfg.Preset.Name, strings.ReplaceAll(seeds.String(), ",", "-")))
	}
	pooled, err := horizon.RunLearnedSeeds(cmd.Context(), cfg, seeds)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(pooled)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "report: %s\n", filepath.Join(cfg.Out, "report.md"))
	for _, c := range pooled.Checks {
		fmt.Fprintf(cmd.OutOrStdout(), "%-8s H=%-3d %-24s gap %+.3f [%+.3f, %+.3f]  bound %.3f  gap ≤ bound %v\n", c.Decoding, c.H, c.Arm, c.Gap, c.GapCI95[0], c.GapCI95[1], c.Bound, c.Respects)
	}
	return nil
}
