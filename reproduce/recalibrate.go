package reproduce

// Online recalibration (docs/DESIGN.md names offline-to-online training as
// the paper's future work): the recalibrated-interactive arm, which
// reproduce trains when Config.Recalibrate is set.
//
// The calibrated simulator is fitted once, on the scripted agents' logs;
// the policy RL trains drifts into turns those logs never showed, where
// the simulator's calibration is not known to hold. This arm cuts the RL
// budget into R rounds (preset.Recalibration). Round i:
//
//  1. rl: GRPO against the current simulator for the round's iterations,
//     from the previous round's policy (the first from the shared base),
//     on the training instances that follow the previous round's, so that
//     the rounds together play the calibrated arm's instances with its RL
//     seed and budget;
//  2. gap: the sim-to-real gap on the round's policy — its success against
//     the current simulator minus against the human proxy, paired on the
//     same held-out problems and seeds — and the simulator's δ̄ (fidelity's
//     per-turn act distributions) and NLL on those held-out human turns;
//  3. human (all rounds but the last): the policy plays HumanEpisodes
//     conversations with the human proxy on training problems: the
//     expensive part at scale (real users), counted and reported;
//  4. refit: the simulator is re-fitted with the sim stage's SFT
//     machinery, warm-started from the current simulator, on the logs
//     (ReplayLogs of them, drawn per re-fit) plus every human conversation
//     of the seed's rounds so far; it never sees the test split;
//  5. gap-refit: the same gap measurement against the re-fitted simulator.
//
// Every step is a stage of its own, so a run killed anywhere (in a re-fit's
// SFT too, which resumes from its checkpoint) ends as an uninterrupted one.
// Each round's GRPO starts a fresh optimizer and takes the round's first
// policy as its KL reference (train.GRPO's contract), where the
// calibrated arm keeps one of each for its whole budget; round 1 is the
// calibrated arm's first iterations exactly.
//
// Files, for RL seed index K and round I:
//
//	checkpoints/recalibrated-interactive/seed-K                  the last round's policy (evaluated like every arm)
//	checkpoints/recalibrated-interactive/rounds/seed-K/round-I/policy, …/sim
//	recalibration/seed-K/round-I/human.episodes.jsonl            the round's conversations with the human proxy
//	recalibration/seed-K/round-I/gap-human.episodes.jsonl         the held-out conversations of the gap
//	recalibration/seed-K/round-I/gap.json, gap-refit.json
//	recalibration.json                                           every seed's rounds and the control (written by the report: recalreport.go)

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/runfolder"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/train"
)

// Where the gap is measured and the human conversations are played.
const (
	// gapStart is the first held-out problem of the gap: past the
	// evaluation's first EvalEpisodes and the monitor's set at 5000, so it
	// shares a problem with neither. gapSeed mixes the run's seed into its
	// user and agent seeds, the same for every RL seed and round.
	gapStart = 10000
	gapSeed  = 0x676170
	// humanSeed mixes an RL seed into the seeds of its human conversations.
	humanSeed = 0x68756d616e
)

// rounds is the round schedule: each round's RL iterations, summing to
// the other arms' budget.
func (r *run) rounds() []int {
	return r.cfg.Preset.Recalibration.RoundIterations(r.cfg.Preset.RL.Iterations)
}

// roundStage is the stage (and metrics) prefix of seed index k's round i
// (from 1): "recalibrated-interactive/seed-0/round-1".
func roundStage(k, i int) string { return fmt.Sprintf("%s/round-%d", seedName(ArmRecalibrated, k), i) }

// roundRel is the folder, within the run folder, of a round's
// conversations and measurements; roundDir is its path.
func roundRel(k, i int) string {
	return filepath.Join("recalibration", fmt.Sprintf("seed-%d", k), fmt.Sprintf("round-%d", i))
}

func (r *run) roundDir(k, i int) string { return r.f.Path(roundRel(k, i)) }

func (r *run) roundCkpt(k, i int, what string) string {
	return r.f.Path("checkpoints", ArmRecalibrated, "rounds", fmt.Sprintf("seed-%d", k), fmt.Sprintf("round-%d", i), what)
}

// roundPolicy is the policy after round i's RL: the arm's checkpoint for
// the last round, so that it is evaluated as every arm is.
func (r *run) roundPolicy(k, i int) string {
	if i == len(r.rounds()) {
		return r.armCkpt(ArmRecalibrated, k)
	}
	return r.roundCkpt(k, i, "policy")
}

// roundSim is the simulator round i+1 trains against: the shared one
// before any re-fit (i = 0), else round i's re-fit.
func (r *run) roundSim(k, i int) string {
	if i == 0 {
		return r.ckpt("sim")
	}
	return r.roundCkpt(k, i, "sim")
}

// recalibrationStages are seed index k's training stages of the
// recalibrated arm (optRecalibratingGRPO).
func (r *run) recalibrationStages(k int) []stage {
	n := len(r.rounds())
	pr, rc := r.cfg.Preset, r.cfg.Preset.Recalibration
	gap := gapCost(pr, rc.GapEpisodes)
	var out []stage
	for i := 1; i <= n; i++ {
		p := roundStage(k, i)
		out = append(out, stage{p + "/rl", r.roundRL(k, i), rlCost(pr, r.rounds()[i-1], 1)}, stage{p + "/gap", r.roundGap(k, i, false), gap})
		if i < n {
			out = append(out, stage{p + "/human", r.roundHuman(k, i), conversationsCost(kindEval, pr, rc.HumanEpisodes)},
				stage{p + "/refit", r.refit(k, i), sftCost(pr.Sim, rc.SFT)},
				stage{p + "/gap-refit", r.roundGap(k, i, true), gap})
		}
	}
	return out
}

// roundRL trains round i's GRPO: the calibrated arm's config and RL seed,
// the round's iterations from the instance the previous rounds stopped at.
func (r *run) roundRL(k, i int) func(context.Context) error {
	return func(ctx context.Context) error {
		from := r.ckpt(ArmBase)
		if i > 1 {
			from = r.roundPolicy(k, i-1)
		}
		// The last round's result is the arm's.
		return r.grpoAgainst(ctx, from, r.roundSim(k, i-1), r.roundConfig(k, i), r.roundPolicy(k, i), roundStage(k, i)+"/rl")
	}
}

// grpoAgainst trains the policy in from with GRPO config cfg against the
// learned simulator in sim (the human proxy the monitor's) into out, its
// records under stage.
func (r *run) grpoAgainst(ctx context.Context, from, sim string, cfg train.RLConfig, out, stage string) error {
	policy, _, err := chatlm.Load(from)
	if err != nil {
		return err
	}
	su, err := r.learnedSim(sim)
	if err != nil {
		return err
	}
	human, err := r.t.User(dialog.Human)
	if err != nil {
		return err
	}
	res, err := train.GRPO(ctx, policy, r.t, su, human, cfg, out, r.metricsLog(stage))
	if err == nil {
		r.trained(out, res)
	}
	return err
}

// roundConfig is round i's GRPO config: every arm's, with the RL seed of
// index k, the round's iterations and the first training instance after
// the earlier rounds' (so the rounds play the calibrated arm's instances).
func (r *run) roundConfig(k, i int) train.RLConfig {
	its := r.rounds()
	cfg := r.rlConfig(k)
	cfg.Iterations = its[i-1]
	for _, n := range its[:i-1] {
		cfg.Start += n * cfg.InstancesPerStep
	}
	return cfg
}

// GapMeasure is one reading of the sim-to-real gap on a round's policy:
// the run's SimToReal figures (fidelity.go: the policy's success against
// the simulator minus against the human proxy, paired, and δ_t under the
// policy) on the gap's held-out problems, with the simulator's NLL of the
// human proxy's turns there.
type GapMeasure struct {
	SimToReal
	// NLL is the simulator's per-token NLL of the human proxy's turns in
	// the held-out conversations (train.UserNLL): the policy's own
	// distribution, never trained on. Absent when no turn could be scored.
	NLL *float64 `json:"nll,omitempty"`
}

// roundGap measures the gap on round i's policy against the simulator it
// trained with (refit false) or the one re-fitted after it. The human
// side is played once, by the first measurement, and read back by the
// second: the same policy, problems and seeds give the same conversations.
func (r *run) roundGap(k, i int, refit bool) func(context.Context) error {
	simDir, file := r.roundSim(k, i-1), "gap.json"
	if refit {
		simDir, file = r.roundSim(k, i), "gap-refit.json"
	}
	return r.measureGap(gapRun{arm: ArmRecalibrated, name: roundStage(k, i), k: k, policy: r.roundPolicy(k, i), sim: simDir,
		humanFile: filepath.Join(r.roundDir(k, i), "gap-human.episodes.jsonl"), replay: refit, out: filepath.Join(roundRel(k, i), file)})
}

// gapRun is one reading of the sim-to-real gap: a policy against a
// simulator and against the human proxy on the gap's held-out problems.
type gapRun struct {
	arm, name   string // the reading's arm, and its stage (the conversations' agent name)
	k           int    // the RL seed index
	policy, sim string // checkpoint folders
	// humanFile holds the conversations with the human proxy: played and
	// written, or (replay) read back from an earlier reading of the same
	// policy.
	humanFile string
	replay    bool
	out       string // the GapMeasure, relative to the run folder
}

// measureGap is the stage that takes reading g.
func (r *run) measureGap(g gapRun) func(context.Context) error {
	return func(ctx context.Context) error {
		policy, _, err := chatlm.Load(g.policy)
		if err != nil {
			return err
		}
		su, err := r.learnedSim(g.sim)
		if err != nil {
			return err
		}
		agent := &chatlm.Agent{Model: policy, Gen: r.gen(sampled), Tool: dialog.ToolOf(r.t)}
		rc := rollout.Config{Split: "test", Start: gapStart, Instances: r.cfg.Preset.Recalibration.GapEpisodes,
			Seed: r.cfg.Seed ^ gapSeed, MaxTurns: r.cfg.Preset.MaxTurns, AgentName: g.name, CountTokens: policy.CountTokens}
		var humanEps []dialog.Episode
		if g.replay {
			if humanEps, err = dialog.LoadEpisodes(g.humanFile); err != nil {
				return err
			}
			if err := pairing(humanEps, rc, dialog.Human.String()); err != nil {
				return fmt.Errorf("%s: %w", g.humanFile, err)
			}
		} else if humanEps, err = r.playHuman(ctx, agent, rc, g.humanFile); err != nil {
			return err
		}
		rc.UserName = dialog.Learned.String()
		simEps, err := rollout.Run(ctx, r.t, agent, su, rc)
		if err != nil {
			return err
		}
		s2r, err := simToRealOf(r.measure(), simEps, humanEps, r.cfg.Seed)
		if err != nil {
			return fmt.Errorf("gap of %s: %w", g.name, err)
		}
		m := GapMeasure{SimToReal: s2r}
		m.Arm, m.Seed, m.Decoding = g.arm, g.k, sampled.name
		m.HumanFrom, _ = filepath.Rel(r.f.Dir, g.humanFile)
		m.Simulator = r.simulatorName(g.sim)
		if v := train.UserNLL(su, humanEps); !math.IsNaN(v) {
			m.NLL = &v
		}
		r.cfg.Log.Info("reproduce: recalibration gap", "stage", g.name, "file", filepath.Base(g.out), "gap", m.Gap, "delta_mean", m.DeltaMean)
		return r.f.WriteJSON(g.out, m)
	}
}

// humanFile is round i's conversations with the human proxy.
func (r *run) humanFile(k, i int) string {
	return filepath.Join(r.roundDir(k, i), "human.episodes.jsonl")
}

// roundHuman plays round i's policy with the human proxy on training
// problems of its own: after the logs' instances, a block per RL seed and
// round, so that no two re-fits share a conversation's problem.
func (r *run) roundHuman(k, i int) func(context.Context) error {
	return func(ctx context.Context) error {
		n := r.cfg.Preset.Recalibration.HumanEpisodes
		start := r.cfg.Preset.LogEpisodes + (k*(len(r.rounds())-1)+i-1)*n
		return r.playTraining(ctx, r.roundPolicy(k, i), k, start, n, roundStage(k, i), r.humanFile(k, i))
	}
}

// playTraining plays the policy in dir (sampled) with the human proxy on
// n training problems from start, with RL seed index k's episode seeds,
// into file; name is the conversations' agent.
func (r *run) playTraining(ctx context.Context, dir string, k, start, n int, name, file string) error {
	policy, _, err := chatlm.Load(dir)
	if err != nil {
		return err
	}
	agent := &chatlm.Agent{Model: policy, Gen: r.gen(sampled), Tool: dialog.ToolOf(r.t)}
	_, err = r.playHuman(ctx, agent, rollout.Config{Split: "train", Start: start, Instances: n,
		Seed: RLSeed(r.cfg.Seed, k) ^ humanSeed, MaxTurns: r.cfg.Preset.MaxTurns, AgentName: name,
		CountTokens: policy.CountTokens}, file)
	return err
}

// refitData is what round i's re-fit trains on: replayLogs(k, i) and
// every conversation with the human proxy of rounds 1 to i. It refuses an
// episode of any split but train: the re-fit must never see a held-out
// problem or persona.
func (r *run) refitData(k, i int) (logs, human []dialog.Episode, err error) {
	if logs, err = r.replayLogs(k, uint64(i)); err != nil {
		return nil, nil, err
	}
	for j := 1; j <= i; j++ {
		eps, err := dialog.LoadEpisodes(r.humanFile(k, j))
		if err != nil {
			return nil, nil, err
		}
		human = append(human, eps...)
	}
	if err := trainOnly(fmt.Sprintf("re-fit of round %d", i), logs, human); err != nil {
		return nil, nil, err
	}
	return logs, human, nil
}

// replayLogs are the logs a re-fit replays: ReplayLogs of them (all when
// 0), a draw seeded by the RL seed of index k and stream (a round, or the
// control's), in log order.
func (r *run) replayLogs(k int, stream uint64) ([]dialog.Episode, error) {
	all, err := r.logs()
	if err != nil {
		return nil, err
	}
	n := r.cfg.Preset.Recalibration.ReplayLogs
	if n <= 0 || n >= len(all) {
		return all, nil
	}
	pick := rand.New(rand.NewPCG(RLSeed(r.cfg.Seed, k), stream)).Perm(len(all))[:n]
	slices.Sort(pick) // in log order
	logs := make([]dialog.Episode, n)
	for j, p := range pick {
		logs[j] = all[p]
	}
	return logs, nil
}

// trainOnly refuses an episode of any split but train in a re-fit's data.
func trainOnly(what string, sets ...[]dialog.Episode) error {
	for _, set := range sets {
		for _, ep := range set {
			if ep.Split != "train" {
				return fmt.Errorf("%s: episode %s is from split %q: a re-fit trains on training problems only", what, ep.ID, ep.Split)
			}
		}
	}
	return nil
}

// refit re-fits the simulator after round i: the sim stage's SFT config
// with the re-fit's budget, warm-started from the simulator round i
// trained against.
func (r *run) refit(k, i int) func(context.Context) error {
	return func(ctx context.Context) error {
		logs, human, err := r.refitData(k, i)
		if err != nil {
			return err
		}
		return r.refitSim(ctx, append(slices.Clone(logs), human...), RLSeed(r.cfg.Seed, k)^uint64(i), 1,
			r.roundSim(k, i-1), r.roundSim(k, i), roundStage(k, i)+"/refit")
	}
}

// refitSim fine-tunes the simulator in from on data into out: the sim
// stage's SFT config with times the re-fit budget's steps, seeded with
// seed, its records under stage.
func (r *run) refitSim(ctx context.Context, data []dialog.Episode, seed uint64, times int, from, out, stage string) error {
	p := &prep{f: r.f, preset: r.cfg.Preset, seed: seed, tasks: []logSet{{t: r.t}}}
	if r.cfg.Shared != "" {
		p.f = &runfolder.Folder{Dir: r.cfg.Shared} // where its tokenizer is
	}
	budget := r.cfg.Preset.Recalibration.SFT
	budget.Steps *= times
	sc, err := p.simConfig(budget)
	if err != nil {
		return err
	}
	sc.From = from
	_, err = sft.Simulator(ctx, data, sc, out, r.metricsLog(stage))
	return err
}
