package fidelity

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"text/tabwriter"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// This file measures a simulator against logged conversations instead of
// the live human proxy: what a user with their own human logs can measure.
// Every user turn of every logged conversation is one context. The
// simulator is teacher-forced: it reads the logged history up to that
// turn (the person's earlier turns, not its own) and writes its own turn,
// which is compared with what the person wrote there.

// LogConfig sets a measurement against logs.
type LogConfig struct {
	// Turns is how many user-turn indexes the per-turn figures cover (0 is
	// the opening); default 6. Later turns count in the overall figures.
	Turns int
	// Seed seeds the simulator: conversation i's session draws from
	// rollout.EpisodeSeed(Seed, i, 0) on PCG stream logStream, a stream no
	// rollout uses, so the human proxy replaying logs it wrote itself does
	// not replay its own random draws.
	Seed uint64
}

// logStream is the random stream of MeasureLogs' simulator sessions: not
// rollout.UserStream nor rollout.AgentStream.
const logStream = 3

// Termination is how well the simulator ends where the person ended,
// counted over contexts. The simulator ends at a context when it closes
// the conversation there (Reply's end; Classify then says End or
// Accept); the person ended there when it is the conversation's last
// user turn and the user, not the turn limit, ended it.
type Termination struct {
	SimEnds    int `json:"sim_ends"`
	PersonEnds int `json:"person_ends"`
	Both       int `json:"both"`
	// Precision is P(person ended | simulator ended) = Both/SimEnds;
	// absent when the simulator never ended.
	Precision *float64 `json:"precision,omitempty"`
	// Recall is P(simulator ended | person ended) = Both/PersonEnds;
	// absent when no person ended.
	Recall *float64 `json:"recall,omitempty"`
}

// Leakage counts turns that reveal what the agent had not asked for. A
// turn leaks the ground truth when it states it (Classify's Leak test)
// and no earlier agent turn asked for it (AsksTruth); it leaks a hidden
// fact when it gives the fact's value with one of its cue words and no
// earlier agent turn asked about it (AsksFact). An opening asked for
// nothing, so a hidden fact in it is a leak (over-sharing).
type Leakage struct {
	// Truth and Fact count turns with each kind of leak.
	Truth int `json:"truth"`
	Fact  int `json:"fact"`
	// Turns counts turns with either; Rate is Turns over the contexts.
	Turns int     `json:"turns"`
	Rate  float64 `json:"rate"`
}

// LogReport is one simulator's fidelity against logged conversations.
type LogReport struct {
	Sim string `json:"sim"`
	// Conversations and UserTurns are how many logged conversations and
	// user-turn contexts were scored. A conversation the user ended
	// without a last message has one more context, where the person's act
	// is End.
	Conversations int `json:"conversations"`
	UserTurns     int `json:"user_turns"`
	// Agreement is the share of contexts where the simulator's act equals
	// the person's; AgreementByTurn[t] the same over user turn t's
	// contexts, of which there are Contexts[t].
	Agreement       float64   `json:"act_agreement"`
	AgreementByTurn []float64 `json:"act_agreement_by_turn"`
	Contexts        []int     `json:"contexts_by_turn"`
	// Delta[t] is the total-variation distance between the simulator's and
	// the people's act distributions over user turn t's contexts (both
	// conditioned on the conversation reaching turn t, so there is no Gone
	// act); DeltaMean is its mean over the turns that have contexts.
	// Agreement bounds it: δ_t ≤ 1 − agreement_t, and δ_t can be 0 while
	// agreement is 0, when the simulator says the right things to the
	// wrong people.
	Delta      []float64         `json:"delta"`
	DeltaMean  float64           `json:"delta_mean"`
	SimActs    []map[Act]float64 `json:"sim_acts"`
	PersonActs []map[Act]float64 `json:"person_acts"`
	// Termination compares where the simulator and the person end.
	Termination Termination `json:"termination"`
	// Leakage is the simulator's; PersonLeakage the logged people's on the
	// same contexts, the rate a faithful simulator has.
	Leakage       Leakage `json:"leakage"`
	PersonLeakage Leakage `json:"person_leakage"`
	// NLL is the per-token NLL of the people's user turns under the
	// simulator's model and Perplexity its exp (model simulators only).
	NLL        *float64 `json:"nll,omitempty"`
	Perplexity *float64 `json:"perplexity,omitempty"`
}

// logContext is one user turn of a logged conversation.
type logContext struct {
	conv    int              // index in the conversations
	turn    int              // user-turn index, 0 the opening
	history []dialog.Message // the logged conversation before the turn
	act     Act              // what the person did
	ended   bool             // the person ended the conversation here
	text    string           // what the person wrote ("" at a silent end)
}

// logContexts lists ep's user turns, with a last silent End context when
// the user ended without a last message. An agent turn the turn limit cut
// off is no context: the person never answered it.
func logContexts(conv int, ep *dialog.Episode) []logContext {
	var out []logContext
	userEnded := ep.End.ByUser()
	last := len(ep.Messages) - 1
	for i, m := range ep.Messages {
		if m.Role != dialog.RoleUser {
			continue
		}
		ended := userEnded && i == last
		out = append(out, logContext{conv: conv, turn: len(out), history: ep.Messages[:i],
			act: Classify(&ep.Oracle, m.Content, ended), ended: ended, text: m.Content})
	}
	if userEnded && last >= 0 && ep.Messages[last].Role != dialog.RoleUser {
		out = append(out, logContext{conv: conv, turn: len(out), history: ep.Messages, act: End, ended: true})
	}
	return out
}

// MeasureLogs scores sim against the people of the logged conversations
// eps (the caller picks the held-out ones), teacher-forced. Each
// conversation gets one simulator session: it is opened for the opening
// and then asked to reply to each logged history in order, so a session's
// memory (patience spent, facts told) follows the logged agent's turns.
// nll, when not nil, scores eps' user turns under the simulator's model.
func MeasureLogs(ctx context.Context, simName string, sim dialog.User, eps []dialog.Episode, cfg LogConfig, nll func([]dialog.Episode) float64) (LogReport, error) {
	if cfg.Turns <= 0 {
		cfg.Turns = 6
	}
	if cfg.Turns > MaxTurnIndexes {
		return LogReport{}, fmt.Errorf("fidelity: %d turn indexes, the limit is %d", cfg.Turns, MaxTurnIndexes)
	}
	rep := LogReport{Sim: simName, Conversations: len(eps)}
	if len(eps) == 0 {
		return rep, fmt.Errorf("fidelity: no logged conversations to measure %s against", simName)
	}
	convs := make([][]logContext, len(eps))
	sessions := make([]dialog.UserSession, len(eps))
	rounds := 0
	for i := range eps {
		convs[i] = logContexts(i, &eps[i])
		rounds = max(rounds, len(convs[i]))
		seed := rollout.EpisodeSeed(cfg.Seed, i, 0)
		sessions[i] = sim.NewSession(&eps[i].Oracle, rand.New(rand.NewPCG(seed, logStream)))
	}
	var ctxs []logContext
	var simActs []Act
	var simEnded []bool
	var simText []string
	// Round k plays every conversation's k-th user turn, so a session's
	// turns come in order and a model simulator batches a round.
	for k := 0; k < rounds; k++ {
		var open, reply []int // indexes into ctxs
		var openS, replyS []dialog.UserSession
		var histories [][]dialog.Message
		for i := range convs {
			if k >= len(convs[i]) {
				continue
			}
			c := convs[i][k]
			j := len(ctxs)
			ctxs = append(ctxs, c)
			simActs, simEnded, simText = append(simActs, ""), append(simEnded, false), append(simText, "")
			if len(c.history) == 0 {
				open, openS = append(open, j), append(openS, sessions[i])
			} else {
				reply, replyS, histories = append(reply, j), append(replyS, sessions[i]), append(histories, c.history)
			}
		}
		if len(open) > 0 {
			texts, err := rollout.Openings(ctx, sim, openS, 1)
			if err != nil {
				return rep, fmt.Errorf("fidelity: %s openings: %w", simName, err)
			}
			for n, j := range open {
				simText[j] = texts[n]
			}
		}
		if len(reply) > 0 {
			texts, ends, err := rollout.Replies(ctx, sim, replyS, histories, 1)
			if err != nil {
				return rep, fmt.Errorf("fidelity: %s replies at user turn %d: %w", simName, k, err)
			}
			for n, j := range reply {
				simText[j], simEnded[j] = texts[n], ends[n]
			}
		}
	}
	for j, c := range ctxs {
		simActs[j] = Classify(&eps[c.conv].Oracle, simText[j], simEnded[j])
	}
	scoreLogs(&rep, eps, ctxs, simActs, simEnded, simText, cfg.Turns)
	if nll != nil {
		v := nll(eps)
		p := math.Exp(v)
		rep.NLL, rep.Perplexity = &v, &p
	}
	return rep, nil
}

// scoreLogs fills rep's agreement, δ_t, termination and leakage from the
// contexts and the simulator's act, end and text at each.
func scoreLogs(rep *LogReport, eps []dialog.Episode, ctxs []logContext, simActs []Act, simEnded []bool, simText []string, turns int) {
	rep.UserTurns = len(ctxs)
	rep.AgreementByTurn = make([]float64, turns)
	rep.Contexts = make([]int, turns)
	rep.Delta = make([]float64, turns)
	rep.SimActs, rep.PersonActs = make([]map[Act]float64, turns), make([]map[Act]float64, turns)
	for t := range turns {
		rep.SimActs[t], rep.PersonActs[t] = map[Act]float64{}, map[Act]float64{}
	}
	agree := 0
	var term Termination
	var simLeak, personLeak Leakage
	for j, c := range ctxs {
		same := simActs[j] == c.act
		if same {
			agree++
		}
		if t := c.turn; t < turns {
			rep.Contexts[t]++
			if same {
				rep.AgreementByTurn[t]++
			}
			rep.SimActs[t][simActs[j]]++
			rep.PersonActs[t][c.act]++
		}
		if simEnded[j] {
			term.SimEnds++
		}
		if c.ended {
			term.PersonEnds++
		}
		if simEnded[j] && c.ended {
			term.Both++
		}
		o := &eps[c.conv].Oracle
		countLeak(&simLeak, o, c.history, simText[j])
		countLeak(&personLeak, o, c.history, c.text)
	}
	rep.Agreement = float64(agree) / float64(len(ctxs))
	var deltas []float64
	for t := range turns {
		n := float64(rep.Contexts[t])
		if n == 0 {
			continue
		}
		rep.AgreementByTurn[t] /= n
		for _, d := range []map[Act]float64{rep.SimActs[t], rep.PersonActs[t]} {
			for a := range d {
				d[a] /= n
			}
		}
		rep.Delta[t] = TV(rep.SimActs[t], rep.PersonActs[t])
		deltas = append(deltas, rep.Delta[t])
	}
	if len(deltas) > 0 {
		rep.DeltaMean = mean(deltas)
	}
	if term.SimEnds > 0 {
		p := float64(term.Both) / float64(term.SimEnds)
		term.Precision = &p
	}
	if term.PersonEnds > 0 {
		r := float64(term.Both) / float64(term.PersonEnds)
		term.Recall = &r
	}
	rep.Termination = term
	for _, l := range []*Leakage{&simLeak, &personLeak} {
		l.Rate = float64(l.Turns) / float64(len(ctxs))
	}
	rep.Leakage, rep.PersonLeakage = simLeak, personLeak
}

// countLeak adds msg, a user turn written after history, to l.
func countLeak(l *Leakage, o *dialog.Oracle, history []dialog.Message, msg string) {
	truth, fact := LeaksUnasked(o, history, msg)
	if truth {
		l.Truth++
	}
	if fact {
		l.Fact++
	}
	if truth || fact {
		l.Turns++
	}
}

// WriteLogTable prints one row per simulator of its fidelity against logs,
// then act agreement and δ_t by user turn.
func WriteLogTable(w io.Writer, reps []LogReport) error {
	if len(reps) == 0 {
		return nil
	}
	opt := func(p *float64, format string) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf(format, *p)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "sim\tact agree\tδ̄\tend P\tend R\tleak (people)\tNLL\tppl")
	for _, r := range reps {
		tm := r.Termination
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%s of %d\t%s of %d\t%.3f (%.3f)\t%s\t%s\n", r.Sim, r.Agreement, r.DeltaMean,
			opt(tm.Precision, "%.3f"), tm.SimEnds, opt(tm.Recall, "%.3f"), tm.PersonEnds,
			r.Leakage.Rate, r.PersonLeakage.Rate, opt(r.NLL, "%.3f"), opt(r.Perplexity, "%.2f"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "user turn t\tcontexts"
	for _, r := range reps {
		head += "\t" + r.Sim + " agree / δ_t"
	}
	fmt.Fprintln(tw, head)
	for t, n := range reps[0].Contexts {
		if n == 0 {
			continue
		}
		fmt.Fprintf(tw, "%d\t%d", t, n)
		for _, r := range reps {
			fmt.Fprintf(tw, "\t%.3f / %.3f", r.AgreementByTurn[t], r.Delta[t])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
