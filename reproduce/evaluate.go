package reproduce

// The held-out evaluations: every arm and seed on the same problems with
// the same users, under each decoding.

import (
	"context"
	"os"
	"path/filepath"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/progress"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
)

// decoding is how the policies play in a held-out evaluation, and the
// folder its files go to.
type decoding struct{ name, dir string }

// The evaluation's two decodings. GRPO and static RL optimise the expected
// reward of the policy as it samples, at the rollouts' temperature; that
// policy is the one the verdict judges. Greedy decoding plays the
// policy's mode, a different policy that RL moves only indirectly: in the
// quick run with greedy evaluation (results/mathchat-quick-calculator)
// every RL arm lost to the base (oracle 0.669 vs 0.690) while the same
// checkpoints, sampled at temperature 1 on the same 500 problems, beat it
// (oracle 0.549 vs 0.450), so both are reported.
var (
	sampled   = decoding{"sampled", "eval"}
	greedy    = decoding{"greedy", "eval-greedy"}
	decodings = []decoding{sampled, greedy}
)

// gen is the generation config of a decoding: the RL rollouts' sampling
// (temperature, top-p) or greedy, with the evaluation's turn length.
func (r *run) gen(d decoding) chatlm.GenConfig {
	g := spec.EvalGen()
	if d == sampled {
		rl := r.rlConfig(0).Gen
		g.Temperature, g.TopP = rl.Temperature, rl.TopP
	}
	return g
}

// evalFile is where an arm's seed index k keeps its evaluation under a
// decoding, without the extension: eval/base, eval-greedy/static/seed-0.
// It is also the evaluation's stage name.
// baseNoTool is the base policy evaluated without the task's tool (the
// calculator): how much of its success the tool carries.
const baseNoTool = "base-without-tool"

func evalFile(d decoding, arm string, k int) string { return d.dir + "/" + policyName(arm, k) }

// conversationsProgress reports a stage's finished conversations as its
// steps: part i of parts (a sweep's temperatures) of total each.
func (r *run) conversationsProgress(stage string, i, parts int) func(done, total int) {
	return func(done, total int) {
		r.cfg.Progress.Emit(progress.Event{Stage: stage, Step: i*total + done, Steps: parts * total, Unit: "conv"})
	}
}

// evaluate plays an arm's seed index k against the human proxy on the
// held-out split under decoding d. Every arm and seed plays the same
// problems with the same user seeds (the run's seed), so their episodes
// pair up; sampled agents draw from the same per-episode streams.
func (r *run) evaluate(d decoding, arm string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		human, err := r.t.User(dialog.Human)
		if err != nil {
			return err
		}
		tool, ckpt := dialog.ToolOf(r.t), arm
		if arm == baseNoTool {
			tool, ckpt = nil, ArmBase
		}
		policy, _, err := chatlm.Load(r.armCkpt(ckpt, k))
		if err != nil {
			return err
		}
		name := policyName(arm, k)
		gen := r.gen(d)
		if d == best {
			temp, err := r.chosenTemperature(ckpt, k)
			if err != nil {
				return err
			}
			gen = tempGen(temp)
		}
		agent := &chatlm.Agent{Model: policy, Gen: gen, Tool: tool}
		eps, err := rollout.Run(ctx, r.t, agent, human, rollout.Config{Split: "test", Start: r.slice().Start, Instances: r.cfg.Preset.EvalEpisodes,
			Seed: r.slice().Seed(r.cfg.Seed), MaxTurns: r.cfg.Preset.MaxTurns, AgentName: name, UserName: dialog.Human.String(),
			CountTokens: policy.CountTokens, Progress: r.conversationsProgress(evalFile(d, arm, k), 0, 1)})
		if err != nil {
			return err
		}
		file := evalFile(d, arm, k)
		if err := os.MkdirAll(filepath.Dir(r.f.Path(file)), 0o755); err != nil {
			return err
		}
		// The episodes first: the summary's presence is what the report
		// reads, and the stage marker follows both.
		if err := dialog.SaveEpisodes(r.f.Path(file+".episodes.jsonl"), eps); err != nil {
			return err
		}
		sum := eval.Summarize(eps, r.cfg.Seed)
		if err := r.f.WriteJSON(file+".json", sum); err != nil {
			return err
		}
		r.cfg.Log.Info("reproduce: evaluated", "arm", name, "decoding", d.name, "reward", sum.Reward)
		return nil
	}
}
