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
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
)

// The third decoding: each policy at its own best temperature. A user
// deploys a policy at whatever decoding serves it best, so "RL helps"
// holds only against the base at its best decoding, not at one fixed for
// all. Each policy (the base, every arm and RL seed) plays the validation
// slice (eval.ValidationSlice: problems and users no verdict uses) at
// every temperature of Config.TuneGrid; the one with the highest success
// (the lowest temperature among ties) is its temperature on the test
// slice, evaluated like the other decodings under eval-best/.
var best = decoding{"best-temperature", "eval-best"}

// tuneResult is one policy's validation sweep, tune/ARM/seed-K.json.
type tuneResult struct {
	Grid    []float64 `json:"grid"`
	Success []float64 `json:"success"`
	// Chosen is the grid's temperature with the highest success; 0 is
	// greedy.
	Chosen   float64 `json:"chosen"`
	Episodes int     `json:"episodes"`
}

// tuneFile is where a policy's sweep goes, without the extension.
func tuneFile(arm string, k int) string { return filepath.Join("tune", policyName(arm, k)) }

// tuneEpisodes is the validation episodes per temperature: the config's,
// or the evaluation's size up to 200.
func (r *run) tuneEpisodes() int {
	if r.cfg.TuneEpisodes > 0 {
		return r.cfg.TuneEpisodes
	}
	return min(200, r.cfg.Preset.EvalEpisodes)
}

// decodings are the run's: sampled and greedy, and best-temperature when
// the run tunes one.
func (r *run) decodings() []decoding {
	if len(r.cfg.TuneGrid) == 0 {
		return decodings
	}
	return []decoding{sampled, greedy, best}
}

// tune plays policy arm (seed index k) on the validation slice at every
// temperature of the grid and writes its sweep.
func (r *run) tune(arm string, k int) func(context.Context) error {
	return func(ctx context.Context) error {
		human, err := r.t.User(dialog.Human)
		if err != nil {
			return err
		}
		policy, _, err := chatlm.Load(r.armCkpt(arm, k))
		if err != nil {
			return err
		}
		res := tuneResult{Grid: r.cfg.TuneGrid, Episodes: r.tuneEpisodes()}
		slice := eval.ValidationSlice
		for i, temp := range r.cfg.TuneGrid {
			g := tempGen(temp)
			agent := &chatlm.Agent{Model: policy, Gen: g, Tool: dialog.ToolOf(r.t)}
			eps, err := rollout.Run(ctx, r.t, agent, human, rollout.Config{Split: "test", Start: slice.Start, Instances: res.Episodes,
				Seed: slice.Seed(r.cfg.Seed), MaxTurns: r.cfg.Preset.MaxTurns, AgentName: arm, UserName: dialog.Human.String(), CountTokens: policy.CountTokens,
				Progress: r.conversationsProgress(tuneFile(arm, k), i, len(r.cfg.TuneGrid))})
			if err != nil {
				return err
			}
			res.Success = append(res.Success, eval.Summarize(eps, r.cfg.Seed).Success)
		}
		res.Chosen = res.Grid[bestIndex(res.Success)]
		if err := os.MkdirAll(filepath.Dir(r.f.Path(tuneFile(arm, k))), 0o755); err != nil {
			return err
		}
		r.cfg.Log.Info("reproduce: tuned temperature", "arm", arm, "seed", k, "temperature", res.Chosen)
		return r.f.WriteJSON(tuneFile(arm, k)+".json", res)
	}
}

// bestIndex is the index of the highest success, the first among ties
// (the grid ascends, so the lowest temperature).
func bestIndex(success []float64) int {
	i := 0
	for j, s := range success {
		if s > success[i] {
			i = j
		}
	}
	return i
}

// tempGen is the evaluation's generation at temperature temp (0: greedy).
func tempGen(temp float64) chatlm.GenConfig {
	g := spec.EvalGen()
	g.Temperature = temp
	return g
}

// chosenTemperature reads the temperature a policy's sweep chose.
func (r *run) chosenTemperature(arm string, k int) (float64, error) {
	var res tuneResult
	if err := r.f.ReadJSON(tuneFile(arm, k)+".json", &res); err != nil {
		return 0, fmt.Errorf("reproduce: best temperature of %s seed %d: %w", arm, k, err)
	}
	return res.Chosen, nil
}

// tuneStages are the validation sweeps of the base and every arm's seed.
func (r *run) tuneStages() []stage {
	if len(r.cfg.TuneGrid) == 0 {
		return nil
	}
	c := conversationsCost(kindTune, r.cfg.Preset, len(r.cfg.TuneGrid)*r.tuneEpisodes())
	out := []stage{{tuneFile(ArmBase, 0), r.tune(ArmBase, 0), c}}
	for k := range r.seeds() {
		for _, arm := range r.trainedArms() {
			out = append(out, stage{tuneFile(arm, k), r.tune(arm, k), c})
		}
	}
	return out
}

// checkTuneGrid refuses a grid that is not ascending temperatures in
// [0, 2].
func checkTuneGrid(grid []float64) error {
	for i, t := range grid {
		if !(t >= 0 && t <= 2) {
			return fmt.Errorf("reproduce: temperature %g in the tuning grid: want 0 (greedy) to 2", t)
		}
		if i > 0 && t <= grid[i-1] {
			return fmt.Errorf("reproduce: the tuning grid %v must ascend", grid)
		}
	}
	return nil
}

// temperatureSection lists each policy's chosen temperature and its
// validation sweep.
func (r *run) temperatureSection(w io.Writer) error {
	if len(r.cfg.TuneGrid) == 0 {
		return nil
	}
	fmt.Fprintf(w, "## Each policy at its best temperature\n\nEvery policy played %d validation problems (the test split from problem %d, users seeded apart; no verdict uses them) at each temperature below; the best (the lowest among ties) is its temperature in the best-temperature verdict, on the test problems.\n\n", r.tuneEpisodes(), eval.ValidationSlice.Start)
	fmt.Fprint(w, "| policy | chosen |")
	for _, t := range r.cfg.TuneGrid {
		fmt.Fprintf(w, " T=%g |", t)
	}
	fmt.Fprintf(w, "\n| --- | --- |%s\n", repeatCell(len(r.cfg.TuneGrid)))
	policies := [][2]any{{ArmBase, 0}}
	for _, arm := range r.trainedArms() {
		for k := range r.seeds() {
			policies = append(policies, [2]any{arm, k})
		}
	}
	for _, p := range policies {
		arm, k := p[0].(string), p[1].(int)
		var res tuneResult
		if err := r.f.ReadJSON(tuneFile(arm, k)+".json", &res); err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s | %g |", policyName(arm, k), res.Chosen)
		for _, s := range res.Success {
			fmt.Fprintf(w, " %.3f |", s)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	return nil
}

// repeatCell is n cells of a markdown table's separator row.
func repeatCell(n int) string { return strings.Repeat(" --- |", n) }
