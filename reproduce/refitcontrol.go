package reproduce

// The control of online recalibration (Config.Recalibrate trains both):
// refit-control-interactive. The recalibrated arm's simulator sees the
// human conversations of R−1 rounds that the calibrated arm's never saw,
// so recalibrated − calibrated mixes two effects: more data and on-policy
// data. The control gets the first without the second. For RL seed index
// K:
//
//  1. human: the base policy plays as many conversations with the human
//     proxy as the recalibrated arm's re-fits get in total, (R−1) ×
//     HumanEpisodes, on exactly the problems and episode seeds of that
//     arm's rounds for seed K (training split, after the logs);
//  2. refit: the shared simulator is re-fitted once, warm-started, on as
//     many replayed logs as one of that arm's re-fits (a draw of its own)
//     plus those conversations, for the steps of all R−1 re-fits;
//  3. gap-refit: the sim-to-real gap of the base policy against the
//     re-fitted simulator;
//  4. rl: GRPO from the base, the calibrated arm's whole budget and RL
//     seed, against the re-fitted simulator;
//  5. gap: the gap of the trained policy against that simulator.
//
// Files:
//
//	checkpoints/refit-control-interactive/seed-K      the policy (evaluated like every arm)
//	checkpoints/refit-control-interactive/sim/seed-K  the re-fitted simulator
//	recalibration/seed-K/control/human.episodes.jsonl, gap-refit.json, gap.json, …

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/sft"
)

// controlStream is the control's draw of replayed logs (the rounds' are
// 1 to R−1) and, mixed into the RL seed, its re-fit's SFT seed.
const controlStream = 0x6374726c

// controlStage is the stage (and metrics) prefix of the control's seed
// index k: "refit-control-interactive/seed-0/…".
func controlStage(k int, step string) string { return seedName(ArmRefitControl, k) + "/" + step }

// controlRel is the folder, within the run folder, of the control's
// conversations and gap readings for seed index k.
func controlRel(k int) string {
	return filepath.Join("recalibration", fmt.Sprintf("seed-%d", k), "control")
}

// controlSim is the control's re-fitted simulator for seed index k.
func (r *run) controlSim(k int) string {
	return r.f.Path("checkpoints", ArmRefitControl, "sim", fmt.Sprintf("seed-%d", k))
}

// controlHumanFile holds the base policy's conversations of the control.
func (r *run) controlHumanFile(k int) string {
	return r.f.Path(controlRel(k), "human.episodes.jsonl")
}

// controlHuman is how many human conversations the control's re-fit
// trains on: all the recalibrated arm's re-fits of one seed get together.
func (r *run) controlHuman() int {
	return (len(r.rounds()) - 1) * r.cfg.Preset.Recalibration.HumanEpisodes
}

// controlStages are seed index k's stages of the control
// (optRefitGRPO).
func (r *run) controlStages(k int) []stage {
	p, rc := r.cfg.Preset, r.cfg.Preset.Recalibration
	gap := gapCost(p, rc.GapEpisodes)
	return []stage{
		{controlStage(k, dialog.Human.String()), r.controlPlay(k), conversationsCost(kindEval, p, r.controlHuman())},
		{controlStage(k, "refit"), r.controlRefit(k), sftCost(p.Sim, rc.SFT)},
		{controlStage(k, "gap-refit"), r.controlGap(k, false), gap},
		{controlStage(k, "rl"), r.controlRL(k), rlCost(p, p.RL.Iterations, 1)},
		{controlStage(k, "gap"), r.controlGap(k, true), gap},
	}
}

// controlPlay plays the base policy with the human proxy on the problems,
// and with the episode seeds, of seed index k's recalibration rounds
// (roundHuman): the same users, another policy.
func (r *run) controlPlay(k int) func(context.Context) error {
	return func(ctx context.Context) error {
		start := r.cfg.Preset.LogEpisodes + k*r.controlHuman()
		return r.playTraining(ctx, r.ckpt(ArmBase), k, start, r.controlHuman(), controlStage(k, dialog.Human.String()), r.controlHumanFile(k))
	}
}

// controlData is the control's re-fit data: its draw of replayed logs and
// the base policy's human conversations, training split only.
func (r *run) controlData(k int) (logs, human []dialog.Episode, err error) {
	if logs, err = r.replayLogs(k, controlStream); err != nil {
		return nil, nil, err
	}
	if human, err = dialog.LoadEpisodes(r.controlHumanFile(k)); err != nil {
		return nil, nil, err
	}
	if len(human) != r.controlHuman() {
		return nil, nil, fmt.Errorf("control re-fit: %s holds %d conversations, want %d (the recalibrated arm's re-fits' total)",
			r.controlHumanFile(k), len(human), r.controlHuman())
	}
	if err := trainOnly("control re-fit", logs, human); err != nil {
		return nil, nil, err
	}
	return logs, human, nil
}

// controlRefit re-fits the shared simulator once on the control's data,
// with the steps of all the recalibrated arm's re-fits.
func (r *run) controlRefit(k int) func(context.Context) error {
	return func(ctx context.Context) error {
		logs, human, err := r.controlData(k)
		if err != nil {
			return err
		}
		return r.refitSim(ctx, append(slices.Clone(logs), human...), RLSeed(r.cfg.Seed, k)^controlStream, len(r.rounds())-1,
			r.ckpt("sim"), r.controlSim(k), controlStage(k, "refit"))
	}
}

// controlGap reads the gap against the control's simulator: of the base
// policy right after the re-fit, or of the trained policy (end).
func (r *run) controlGap(k int, end bool) func(context.Context) error {
	policy, file := r.ckpt(ArmBase), "gap-refit"
	if end {
		policy, file = r.armCkpt(ArmRefitControl, k), "gap"
	}
	return r.measureGap(gapRun{arm: ArmRefitControl, name: controlStage(k, file), k: k, policy: policy, sim: r.controlSim(k),
		humanFile: r.f.Path(controlRel(k), file+"-human.episodes.jsonl"), out: filepath.Join(controlRel(k), file+".json")})
}

// controlRL trains the control's policy: the calibrated arm's config and
// RL seed, from the base, against the re-fitted simulator.
func (r *run) controlRL(k int) func(context.Context) error {
	return func(ctx context.Context) error {
		return r.grpoAgainst(ctx, r.ckpt(ArmBase), r.controlSim(k), r.rlConfig(k), r.armCkpt(ArmRefitControl, k), controlStage(k, "rl"))
	}
}

// ControlSeed is one RL seed's control: its one re-fit and the gap
// against the re-fitted simulator, of the base policy right after the
// re-fit and of the trained policy at the end.
type ControlSeed struct {
	Seed       int        `json:"seed"`
	Refit      Refit      `json:"refit"`
	AfterRefit GapMeasure `json:"after_refit"`
	End        GapMeasure `json:"end"`
}

// controlReadings adds every seed's control to rec.
func (r *run) controlReadings(rec *Recalibration) error {
	for k := range r.seeds() {
		c := ControlSeed{Seed: k}
		for file, g := range map[string]*GapMeasure{"gap-refit.json": &c.AfterRefit, "gap.json": &c.End} {
			if err := r.f.ReadJSON(filepath.Join(controlRel(k), file), g); err != nil {
				return fmt.Errorf("reproduce report: %w", err)
			}
		}
		meta, err := sft.ReadMeta(r.controlSim(k))
		if err != nil {
			return fmt.Errorf("reproduce report: %w", err)
		}
		human, err := dialog.LoadEpisodes(r.controlHumanFile(k))
		if err != nil {
			return fmt.Errorf("reproduce report: %w", err)
		}
		// The meta counts every episode the re-fit trained on.
		c.Refit = Refit{Logs: meta.Logs - len(human), Human: len(human), NewHuman: len(human), Steps: meta.Result.Steps,
			FirstVal: meta.Result.FirstVal, ValNLL: meta.Result.ValNLL}
		rec.ControlHumanConversations += len(human)
		rec.Control = append(rec.Control, c)
	}
	return nil
}

// comparison is the claim better > worse among the rows' comparisons.
func comparison(rows []Row, better, worse string) (Comparison, error) {
	for _, row := range rows {
		for _, c := range row.Comparisons {
			if row.Arm == better && c.Than == worse {
				return c, nil
			}
		}
	}
	return Comparison{}, fmt.Errorf("reproduce report: no comparison %s > %s", better, worse)
}

// controlSection writes report.md's part on the control: the paired
// differences on the held-out evaluation and the gaps beside the
// recalibrated arm's rounds.
func (r *run) controlSection(w io.Writer, rec Recalibration) {
	rc := r.cfg.Preset.Recalibration
	diff := func(c Comparison) string {
		seeds := make([]string, len(c.Seeds))
		for i, v := range c.Seeds {
			seeds[i] = fmt.Sprintf("%+.3f", v)
		}
		return fmt.Sprintf("**%+.3f [%+.3f, %+.3f]** (per seed %s)", c.Difference, c.CI95[0], c.CI95[1], strings.Join(seeds, ", "))
	}
	fmt.Fprintf(w, "### Against its control (%s)\n\n", ArmRefitControl)
	fmt.Fprintf(w, "The control separates on-policy data from more data: per RL seed, the base policy plays the %d conversations with the human proxy that the recalibrated arm's re-fits get in total "+
		"(the same training problems and episode seeds, %d human conversations over the seeds), the shared simulator is re-fitted once on them plus a draw of as many logs as one re-fit replays, "+
		"for the %d steps of all the re-fits (warm-started, the same learning rate), and the calibrated arm's whole RL budget and RL seed train against it. "+
		"Held-out evaluation (sampled, paired over the %d problems and the %d seeds, bootstrap 95%% interval): %s − %s = %s; %s − %s = %s.\n\n",
		r.controlHuman(), rec.ControlHumanConversations, (len(rec.Iterations)-1)*rc.SFT.Steps, r.cfg.Preset.EvalEpisodes, r.seeds(),
		ArmRecalibrated, ArmRefitControl, diff(rec.VersusControl), ArmRefitControl, ArmCalibrated, diff(rec.ControlVersusCalibrated))
	fmt.Fprintf(w, "The sim-to-real gap on the same %d held-out problems: each round of the recalibrated arm (its policy against the simulator it trained with, then against the re-fitted one) "+
		"beside the control's one simulator, read with the base policy right after its re-fit and with the trained policy at the end.\n\n", rc.GapEpisodes)
	fmt.Fprint(w, "| seed |")
	for i := range rec.Iterations {
		fmt.Fprintf(w, " recalibrated round %d gap |", i+1)
	}
	fmt.Fprintln(w, " control gap after its re-fit (base policy) | control gap at the end | control δ̄ after → end | control re-fit data | control re-fit held-out NLL |")
	fmt.Fprintln(w, "| --- |"+repeatCell(len(rec.Iterations)+5))
	gap := func(g GapMeasure) string { return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", g.Gap, g.CI95[0], g.CI95[1]) }
	for k, c := range rec.Control {
		fmt.Fprintf(w, "| %d |", c.Seed)
		for _, rd := range rec.Seeds[k].Rounds {
			cell := gap(rd.Gap)
			if rd.AfterRefit != nil {
				cell += fmt.Sprintf(" → %+.3f", rd.AfterRefit.Gap)
			}
			fmt.Fprintf(w, " %s |", cell)
		}
		fmt.Fprintf(w, " %s | %s | %.3f → %.3f | %d logs + %d human, %d steps | %.3f → %.3f |\n", gap(c.AfterRefit), gap(c.End),
			c.AfterRefit.DeltaMean, c.End.DeltaMean, c.Refit.Logs, c.Refit.Human, c.Refit.Steps, c.Refit.FirstVal, c.Refit.ValNLL)
	}
	fmt.Fprintln(w)
}
