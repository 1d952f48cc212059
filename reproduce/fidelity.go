package reproduce

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/fidelity"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/summary"
)

// This file measures the simulator's fidelity under each trained policy's
// own behaviour: the sim-to-real gap, the policy's success against the
// run's calibrated simulator minus its success against the human proxy,
// on the held-out problems of the evaluation with the same user seeds and
// the same sampled decoding (so the agent draws from the same per-episode
// streams too). The simulator was fitted to the scripted agents'
// conversations; a policy RL has moved away from them is where a gap
// opens, and where a policy that exploits the simulator shows.
//
// Files, per arm and RL seed index K (the base: fidelity/base):
//
//	fidelity/ARM/seed-K.json               the SimToReal figures
//	fidelity/ARM/seed-K.episodes.jsonl     the conversations with the simulator
//	fidelity/ARM/seed-K.human.episodes.jsonl  the ones with the human proxy,
//	                                       only when the evaluation's could not be used

// SimToReal is one policy's sim-to-real gap (summary.SimToReal).
type SimToReal = summary.SimToReal

// fidelityTurns is how many user turns δ_t covers (fidelity.Config's
// default).
const fidelityTurns = 6

// fidelityFile is where an arm's seed index k keeps its sim-to-real gap,
// without the extension; also its stage name.
func fidelityFile(arm string, k int) string {
	return "fidelity/" + policyName(arm, k)
}

// fidelityStages measure the gap of the base and of every RL arm and seed.
// They come after the evaluations, whose conversations with the human
// proxy they reuse.
func (r *run) fidelityStages() []stage {
	out := []stage{{fidelityFile(ArmBase, 0), r.simToReal(ArmBase, 0)}}
	for k := range r.seeds() {
		for _, arm := range r.trainedArms() {
			out = append(out, stage{fidelityFile(arm, k), r.simToReal(arm, k)})
		}
	}
	return out
}

// simToReal plays arm's seed index k against the run's simulator as the
// evaluation played it against the human proxy, and compares the two.
func (r *run) simToReal(arm string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		policy, _, err := chatlm.Load(r.armCkpt(arm, k))
		if err != nil {
			return err
		}
		simDir := r.ckpt("sim")
		sim, err := spec.LearnedUser(r.t, simDir)
		if err != nil {
			return err
		}
		name := policyName(arm, k)
		// As evaluate plays: the task's tool, the sampled decoding, the
		// evaluation's problems, user seeds and turn limit.
		agent := &chatlm.Agent{Model: policy, Gen: r.gen(sampled), Tool: dialog.ToolOf(r.t)}
		rc := rollout.Config{Split: "test", Start: r.slice().Start, Instances: r.cfg.Preset.EvalEpisodes, Seed: r.slice().Seed(r.cfg.Seed),
			MaxTurns: r.cfg.Preset.MaxTurns, AgentName: name, CountTokens: policy.CountTokens}
		file := fidelityFile(arm, k)
		if err := os.MkdirAll(filepath.Dir(r.f.Path(file)), 0o755); err != nil {
			return err
		}
		humanFrom := evalFile(sampled, arm, k) + ".episodes.jsonl"
		humanEps, err := dialog.LoadEpisodes(r.f.Path(humanFrom))
		if err != nil || pairing(humanEps, rc, dialog.Human.String()) != nil {
			// No usable evaluation (removed, or played under other
			// settings): play the human side here.
			humanFrom = file + ".human.episodes.jsonl"
			if humanEps, err = r.playHuman(ctx, agent, rc, r.f.Path(humanFrom)); err != nil {
				return err
			}
		}
		rc.UserName = dialog.Learned.String()
		simEps, err := rollout.Run(ctx, r.t, agent, sim, rc)
		if err != nil {
			return err
		}
		if err := dialog.SaveEpisodes(r.f.Path(file+".episodes.jsonl"), simEps); err != nil {
			return err
		}
		g, err := simToRealOf(r.measure(), simEps, humanEps, r.cfg.Seed)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		g.Arm, g.Seed, g.Decoding, g.HumanFrom, g.Simulator = arm, k, sampled.name, humanFrom, r.simulatorName(simDir)
		r.cfg.Log.Info("reproduce: sim-to-real gap", "arm", name, "sim", g.SimScore, "human", g.HumanScore, "gap", g.Gap)
		return r.f.WriteJSON(file+".json", g)
	}
}

// playHuman plays agent against the human proxy on rc's problems and
// saves the conversations to path before returning them.
func (r *run) playHuman(ctx context.Context, agent dialog.Agent, rc rollout.Config, path string) ([]dialog.Episode, error) {
	human, err := r.t.User(dialog.Human)
	if err != nil {
		return nil, err
	}
	rc.UserName = dialog.Human.String()
	eps, err := rollout.Run(ctx, r.t, agent, human, rc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return eps, dialog.SaveEpisodes(path, eps)
}

// simulatorName is how a gap record names the simulator in simDir:
// relative to the run folder, or as it is when it lies outside (a shared
// simulator).
func (r *run) simulatorName(simDir string) string {
	if rel, err := filepath.Rel(r.f.Dir, simDir); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return simDir
}

// pairing reports why eps are not the conversations rc plays with user:
// one per held-out problem in order, each with the episode seed rc gives
// it, by the same agent.
func pairing(eps []dialog.Episode, rc rollout.Config, user string) error {
	if len(eps) != rc.Instances {
		return fmt.Errorf("%d conversations, want %d", len(eps), rc.Instances)
	}
	for i, ep := range eps {
		if ep.Index != rc.Start+i || ep.Split != rc.Split || ep.Agent != rc.AgentName || ep.User != user ||
			ep.Seed != rollout.EpisodeSeed(rc.Seed, ep.Index, 0) || (rc.MaxTurns > 0 && ep.MaxTurns != 0 && ep.MaxTurns != rc.MaxTurns) {
			return fmt.Errorf("conversation %d (%s, problem %d, seed %d, agent %s, user %s) is not problem %d of %s with seed %d by %s with %s",
				i, ep.Split, ep.Index, ep.Seed, ep.Agent, ep.User, rc.Start+i, rc.Split, rollout.EpisodeSeed(rc.Seed, rc.Start+i, 0), rc.AgentName, user)
		}
	}
	return nil
}

// simToRealOf compares one policy's conversations with the simulator and
// with the human proxy, paired by problem and episode seed.
func simToRealOf(m dialog.Measure, simEps, humanEps []dialog.Episode, seed uint64) (SimToReal, error) {
	if len(simEps) != len(humanEps) || len(simEps) == 0 {
		return SimToReal{}, fmt.Errorf("%d conversations with the simulator, %d with the human proxy: not paired", len(simEps), len(humanEps))
	}
	for j := range simEps {
		if simEps[j].Index != humanEps[j].Index || simEps[j].Seed != humanEps[j].Seed {
			return SimToReal{}, fmt.Errorf("conversation %d: problem %d seed %d with the simulator, problem %d seed %d with the human proxy: not paired",
				j, simEps[j].Index, simEps[j].Seed, humanEps[j].Index, humanEps[j].Seed)
		}
	}
	s := evaluation{sum: eval.Summarize(simEps, seed), eps: simEps}.scores(m)
	h := evaluation{sum: eval.Summarize(humanEps, seed), eps: humanEps}.scores(m)
	d, lo, hi, err := metric.PairedBootstrap([][]float64{s}, [][]float64{h}, bootstrapResamples, 0.95, bootstrapSeed)
	if err != nil {
		return SimToReal{}, err
	}
	g := SimToReal{SimScore: mean(s), HumanScore: mean(h), Gap: d, CI95: [2]float64{lo, hi}, Problems: len(s)}
	sa, ha := fidelity.ActsByTurn(simEps, fidelityTurns), fidelity.ActsByTurn(humanEps, fidelityTurns)
	for t := range fidelityTurns {
		g.Delta = append(g.Delta, fidelity.TV(sa[t], ha[t]))
	}
	g.DeltaMean = mean(g.Delta)
	return g, nil
}

// simToRealSection writes the report's section on the gap: per arm the
// seeds' mean figures and the gap's paired interval over problems and
// seeds, then each seed's gap. A run without the stages' files writes
// nothing.
func (r *run) simToRealSection(w io.Writer) error {
	type armGap struct {
		arm      string
		gaps     []SimToReal
		sim, hum [][]float64 // per seed, per problem
	}
	var rows []armGap
	for _, arm := range append([]string{ArmBase}, r.trainedArms()...) {
		row := armGap{arm: arm}
		for k := range r.seedsOf(arm) {
			file := fidelityFile(arm, k)
			var g SimToReal
			if err := r.f.ReadJSON(file+".json", &g); err != nil {
				if os.IsNotExist(err) {
					continue
				}
				return fmt.Errorf("reproduce report: %w", err)
			}
			simEps, err := dialog.LoadEpisodes(r.f.Path(file + ".episodes.jsonl"))
			if err != nil {
				return fmt.Errorf("reproduce report: %w", err)
			}
			humanEps, err := dialog.LoadEpisodes(r.f.Path(g.HumanFrom))
			if err != nil {
				return fmt.Errorf("reproduce report: %s: %w", file, err)
			}
			row.gaps = append(row.gaps, g)
			row.sim = append(row.sim, evaluation{sum: eval.Summarize(simEps, r.cfg.Seed), eps: simEps}.scores(r.measure()))
			row.hum = append(row.hum, evaluation{sum: eval.Summarize(humanEps, r.cfg.Seed), eps: humanEps}.scores(r.measure()))
		}
		if len(row.gaps) > 0 {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	measure := r.measure().Name
	fmt.Fprintln(w, "## Sim-to-real gap of the trained policies")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Each policy, sampled as in the verdict, on the same %d held-out problems with the same user seeds, against the run's calibrated simulator (%s) and against the human proxy (the evaluation's conversations): "+
		"its %s against the simulator minus against the human proxy. The interval is a paired percentile bootstrap over problems (the seeds' mean per problem); "+
		"δ̄ is the mean total-variation distance between the two users' act distributions by user turn in those conversations: the simulator's fidelity under the policy's own behaviour, not the scripted agents' it was fitted to. "+
		"A gap that grows with RL on the simulator is the policy exploiting it (fidelity/ARM/seed-K.json).\n\n",
		rows[0].gaps[0].Problems, rows[0].gaps[0].Simulator, measure)
	fmt.Fprintf(w, "| arm | seeds | %s vs simulator | %s vs human proxy | gap (95%% CI) | per RL seed | δ̄ |\n", measure, measure)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, row := range rows {
		d, lo, hi, err := metric.PairedBootstrap(row.sim, row.hum, bootstrapResamples, 0.95, bootstrapSeed)
		if err != nil {
			return fmt.Errorf("reproduce report: gap of %s: %w", row.arm, err)
		}
		var s, h, delta []float64
		per := make([]string, len(row.gaps))
		for i, g := range row.gaps {
			s, h, delta = append(s, g.SimScore), append(h, g.HumanScore), append(delta, g.DeltaMean)
			per[i] = fmt.Sprintf("%+.3f", g.Gap)
		}
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %+.3f [%+.3f, %+.3f] | %s | %.3f |\n", row.arm, len(row.gaps), mean(s), mean(h), d, lo, hi, strings.Join(per, ", "), mean(delta))
	}
	fmt.Fprintln(w)
	return nil
}
