package reproduce

// recalibration.json and report.md's section on online recalibration:
// every seed's rounds (recalibrate.go) and its control (refitcontrol.go).

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/sft"
)

// Recalibration is recalibration.json: the arm's schedule, the human
// conversations it used, and every seed's rounds.
type Recalibration struct {
	// Iterations are the rounds' RL iterations; they sum to every arm's.
	Iterations []int `json:"iterations"`
	// HumanConversations is how many conversations with the human proxy
	// the re-fits used, over every seed and round: at scale, real users.
	HumanConversations int `json:"human_conversations"`
	// Seeds holds each RL seed's rounds.
	Seeds []RecalibrationSeed `json:"seeds"`
	// Mean is each round's readings averaged over the seeds.
	Mean []RoundMean `json:"mean"`
	// ControlHumanConversations is how many conversations with the human
	// proxy, played by the base policy, the control's re-fits used over
	// every seed: HumanConversations, by construction.
	ControlHumanConversations int `json:"control_human_conversations"`
	// Control holds each RL seed's control (refitcontrol.go).
	Control []ControlSeed `json:"control"`
	// VersusControl is the recalibrated arm's held-out score (sampled)
	// minus its control's, paired over problems and seeds as the claims
	// are; ControlVersusCalibrated the control's minus the calibrated
	// arm's.
	VersusControl           Comparison `json:"versus_control"`
	ControlVersusCalibrated Comparison `json:"control_versus_calibrated"`
}

// RecalibrationSeed is one RL seed's rounds.
type RecalibrationSeed struct {
	Seed   int     `json:"seed"`
	RLSeed uint64  `json:"rl_seed"`
	Rounds []Round `json:"rounds"`
}

// Round is one round of one seed.
type Round struct {
	Round      int `json:"round"`
	Iterations int `json:"iterations"`
	// Gap is the round's policy against the simulator it trained with;
	// AfterRefit against the one re-fitted after it (none after the last
	// round, which has no re-fit).
	Gap        GapMeasure  `json:"gap"`
	AfterRefit *GapMeasure `json:"after_refit,omitempty"`
	Refit      *Refit      `json:"refit,omitempty"`
}

// Refit is one re-fit of the simulator.
type Refit struct {
	// Logs and Human are the re-fit's data: replayed logs and the human
	// conversations of this round and the earlier ones; NewHuman this
	// round's alone.
	Logs     int `json:"logs"`
	Human    int `json:"human"`
	NewHuman int `json:"new_human"`
	Steps    int `json:"steps"`
	// FirstVal and ValNLL are the NLL of the re-fit's own held-out share
	// (sft's validation split of its data) before the re-fit and at its
	// best step.
	FirstVal float64 `json:"first_val_nll"`
	ValNLL   float64 `json:"val_nll"`
}

// RoundMean is one round's readings averaged over the RL seeds.
type RoundMean struct {
	Round           int      `json:"round"`
	Gap             float64  `json:"gap"`
	GapAfterRefit   *float64 `json:"gap_after_refit,omitempty"`
	DeltaMean       float64  `json:"delta_mean"`
	DeltaAfterRefit *float64 `json:"delta_mean_after_refit,omitempty"`
}

// recalibration reads every seed's rounds.
func (r *run) recalibration() (Recalibration, error) {
	its := r.rounds()
	rec := Recalibration{Iterations: its}
	read := func(k, i int, file string) (GapMeasure, error) {
		var g GapMeasure
		err := r.f.ReadJSON(filepath.Join(roundRel(k, i), file), &g)
		return g, err
	}
	rec.Mean = make([]RoundMean, len(its))
	for k := range r.seeds() {
		s := RecalibrationSeed{Seed: k, RLSeed: RLSeed(r.cfg.Seed, k)}
		cumHuman := 0
		for i := 1; i <= len(its); i++ {
			g, err := read(k, i, "gap.json")
			if err != nil {
				return rec, fmt.Errorf("reproduce report: %w", err)
			}
			round := Round{Round: i, Iterations: its[i-1], Gap: g}
			m := &rec.Mean[i-1]
			m.Round = i
			m.Gap += g.Gap / float64(r.seeds())
			m.DeltaMean += g.DeltaMean / float64(r.seeds())
			if i < len(its) {
				after, err := read(k, i, "gap-refit.json")
				if err != nil {
					return rec, fmt.Errorf("reproduce report: %w", err)
				}
				meta, err := sft.ReadMeta(r.roundSim(k, i))
				if err != nil {
					return rec, fmt.Errorf("reproduce report: %w", err)
				}
				newHuman, err := dialog.LoadEpisodes(r.humanFile(k, i))
				if err != nil {
					return rec, fmt.Errorf("reproduce report: %w", err)
				}
				cumHuman += len(newHuman)
				// The meta counts every episode the re-fit trained on.
				rf := &Refit{Logs: meta.Logs - cumHuman, Human: cumHuman, NewHuman: len(newHuman), Steps: meta.Result.Steps,
					FirstVal: meta.Result.FirstVal, ValNLL: meta.Result.ValNLL}
				round.AfterRefit, round.Refit = &after, rf
				rec.HumanConversations += rf.NewHuman
				if m.GapAfterRefit == nil {
					m.GapAfterRefit, m.DeltaAfterRefit = new(float64), new(float64)
				}
				*m.GapAfterRefit += after.Gap / float64(r.seeds())
				*m.DeltaAfterRefit += after.DeltaMean / float64(r.seeds())
			}
			s.Rounds = append(s.Rounds, round)
		}
		rec.Seeds = append(rec.Seeds, s)
	}
	return rec, r.controlReadings(&rec)
}

// recalibrationSection writes recalibration.json and report.md's section
// on the recalibrated arm; nothing when the run has none.
func (r *run) recalibrationSection(w io.Writer, rows []Row) error {
	if !r.cfg.Recalibrate {
		return nil
	}
	rec, err := r.recalibration()
	if err != nil {
		return err
	}
	if rec.VersusControl, err = comparison(rows, ArmRecalibrated, ArmRefitControl); err != nil {
		return err
	}
	if rec.ControlVersusCalibrated, err = comparison(rows, ArmRefitControl, ArmCalibrated); err != nil {
		return err
	}
	if err := r.f.WriteJSON("recalibration.json", rec); err != nil {
		return err
	}
	p, rc := r.cfg.Preset, r.cfg.Preset.Recalibration
	its := make([]string, len(rec.Iterations))
	for i, n := range rec.Iterations {
		its[i] = fmt.Sprint(n)
	}
	replay := "all the logs"
	if rc.ReplayLogs > 0 {
		replay = fmt.Sprintf("%d of the logs (a seeded draw per re-fit)", rc.ReplayLogs)
	}
	fmt.Fprintf(w, "## Online recalibration (%s)\n\n", ArmRecalibrated)
	fmt.Fprintf(w, "The arm trains its %d RL iterations in %d rounds (%s iterations: the same budget, RL seeds and training instances as %s). "+
		"After every round but the last the policy plays %d conversations with the human proxy on training problems of its own, and the simulator is re-fitted "+
		"(the sim stage's SFT, warm-started from the current simulator, %d steps) on %s plus every human conversation of the seed so far. "+
		"Human conversations used: **%d** (%d seeds × %d re-fits × %d); at scale these are real users, the expensive part. "+
		"Each round's GRPO restarts its optimizer and takes the round's first policy as its KL reference.\n\n",
		p.RL.Iterations, len(rec.Iterations), strings.Join(its, " + "), ArmCalibrated, rc.HumanEpisodes, rc.SFT.Steps, replay,
		rec.HumanConversations, r.seeds(), len(rec.Iterations)-1, rc.HumanEpisodes)
	fmt.Fprintf(w, "The sim-to-real gap is the round's policy (sampled) against the simulator minus against the human proxy, paired on the same %d held-out problems "+
		"(test split from index %d, disjoint from the evaluation's and the monitor's) with the same seeds, with a paired bootstrap 95%% interval; "+
		"δ̄ is the mean over user turns 0–%d of the total-variation distance between the simulator's and the human's dialogue acts in those conversations; "+
		"NLL is the simulator's per-token NLL of the human's turns there. \"before\" is the simulator the round trained against, \"after\" the re-fitted one "+
		"the next round trains against; the re-fit's own held-out NLL is on its validation share of the re-fit data.\n\n",
		rc.GapEpisodes, gapStart, fidelityTurns-1)
	fmt.Fprintln(w, "| seed | round | iterations | gap before (95% CI) | gap after (95% CI) | δ̄ before → after | NLL before → after | human conversations (re-fit data) | re-fit held-out NLL |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	nll := func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	for _, s := range rec.Seeds {
		for _, rd := range s.Rounds {
			g := rd.Gap
			after, delta, nlls, human, val := "–", fmt.Sprintf("%.3f", g.DeltaMean), nll(g.NLL), "–", "–"
			if a := rd.AfterRefit; a != nil {
				after = fmt.Sprintf("%+.3f [%+.3f, %+.3f]", a.Gap, a.CI95[0], a.CI95[1])
				delta += fmt.Sprintf(" → %.3f", a.DeltaMean)
				nlls += " → " + nll(a.NLL)
				human = fmt.Sprintf("%d (%d logs + %d human)", rd.Refit.NewHuman, rd.Refit.Logs, rd.Refit.Human)
				val = fmt.Sprintf("%.3f → %.3f", rd.Refit.FirstVal, rd.Refit.ValNLL)
			}
			fmt.Fprintf(w, "| %d | %d | %d | %+.3f [%+.3f, %+.3f] | %s | %s | %s | %s | %s |\n", s.Seed, rd.Round, rd.Iterations,
				g.Gap, g.CI95[0], g.CI95[1], after, delta, nlls, human, val)
		}
	}
	fmt.Fprintln(w)
	var means []string
	for _, m := range rec.Mean {
		s := fmt.Sprintf("round %d: gap %+.3f", m.Round, m.Gap)
		if m.GapAfterRefit != nil {
			s += fmt.Sprintf(" → %+.3f after the re-fit (δ̄ %.3f → %.3f)", *m.GapAfterRefit, m.DeltaMean, *m.DeltaAfterRefit)
		} else {
			s += fmt.Sprintf(" (δ̄ %.3f)", m.DeltaMean)
		}
		means = append(means, s)
	}
	fmt.Fprintf(w, "Mean over the %d seeds: %s. The verdict table compares the arm with %s and %s on the held-out evaluation.\n\n",
		r.seeds(), strings.Join(means, "; "), ArmCalibrated, ArmOracle)
	r.controlSection(w, rec)
	return nil
}
