// Package fidelity measures how faithfully a user simulator stands in for
// real people, by comparing it with the human proxy on identical held-out
// contexts: the distribution of user dialogue acts at each turn and its
// total-variation distance δ_t to the human's, probes of the documented
// artifacts of prompted simulators (sycophancy, leakage, over-sharing,
// when to end), the sim-to-real gap of fixed scripted agents, and, for
// model simulators, the NLL of held-out human user turns.
//
// By the simulation lemma the objective an agent is trained on is off by up
// to R_max·Σ_t (H−t)·δ_t, so δ_t is the number that matters.
package fidelity

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/eval"
	"github.com/calibrl/calibrl/rollout"
)

// Task is what fidelity needs of a task.
type Task interface {
	rollout.Task
	Agent(profile string) (dialog.Agent, error)
	Profiles() []string
}

// Prober is implemented by tasks that say how an agent delivers a wrong
// outcome, a right one, and asks for the ground truth. Tasks without it
// get answer-style probes ("The answer is N.").
type Prober interface {
	ProbeMessages(o *dialog.Oracle) (wrong, right, ask string)
}

// Config sets a measurement.
type Config struct {
	// Split of the contexts; default "test" (held out from every log).
	Split string
	// Start is the first instance of Split the contexts take: 0 for the
	// test split's verdict slice, eval.ValidationSlice.Start to measure
	// on problems no verdict reads (with that slice's Seed).
	Start int
	// Instances per agent and per probe; default 200.
	Instances int
	// Seed of every episode; the simulator and the human see the same.
	Seed uint64
	// MaxTurns per episode; default rollout.DefaultMaxTurns.
	MaxTurns int
	// Agents name the agents whose sim-to-real gap is measured; default
	// every scripted profile of the task. A bare name is a scripted
	// profile; others are whatever Agent builds.
	Agents []string
	// Agent builds the agent named by one of Agents; default the task's
	// scripted profiles (t.Agent) alone. The command line passes
	// spec.Agent, which also builds lm:DIR and remote:MODEL, so the gap is
	// measured on trained policies, not only on the agents the simulator
	// was fitted to.
	Agent func(name string) (dialog.Agent, error)
	// Turns is how many user-turn indexes δ_t covers (0 is the opening);
	// default 6.
	Turns int
	// Histories, when positive, is how many validation conversations
	// (ValidationLogs: the validation slice, never the test problems) the
	// per-history fidelity (MeasureHistories) is measured on, with Samples
	// draws per history (HistoryConfig's default when 0). Zero measures
	// none.
	Histories int
	Samples   int
}

func (c *Config) fill(t Task) {
	if c.Split == "" {
		c.Split = "test"
	}
	if c.Instances <= 0 {
		c.Instances = 200
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = rollout.DefaultMaxTurns
	}
	if len(c.Agents) == 0 {
		c.Agents = t.Profiles()
	}
	if c.Turns <= 0 {
		c.Turns = 6
	}
}

// MaxTurnIndexes bounds Turns: the per-turn figures hold a row per index,
// and no conversation of the tasks is a thousand turns long.
const MaxTurnIndexes = 1024

// check reports sizes past their limits, before anything is allocated:
// every agent's episodes with the simulator and the human are held
// together (rollout.MaxHeld).
func (c Config) check() error {
	if c.Turns > MaxTurnIndexes {
		return fmt.Errorf("fidelity: %d turn indexes, the limit is %d", c.Turns, MaxTurnIndexes)
	}
	if held := 3 * max(1, len(c.Agents)); c.Instances > rollout.MaxHeld/held {
		return fmt.Errorf("fidelity: %d contexts for each of %d agents, the limit is %d (%d episodes held at once)", c.Instances, len(c.Agents), rollout.MaxHeld/held, rollout.MaxHeld)
	}
	return nil
}

// Rates are the artifact probes' results, each in [0,1].
type Rates struct {
	// Sycophancy: how often a wrong final outcome is accepted.
	Sycophancy float64 `json:"sycophancy"`
	// Leak: how often asking for the ground truth gets it.
	Leak float64 `json:"leak"`
	// Oversharing: the fraction of hidden facts (or edits) in the opening.
	Oversharing float64 `json:"oversharing"`
	// AcceptRight: how often the right outcome is accepted. A simulator
	// that rejects everything is not sycophantic, but it is no judge
	// either; this is the other half of the sycophancy probe.
	AcceptRight float64 `json:"accept_right"`
}

// Verdicts counts a user's judgements of delivered outcomes: after every
// agent turn that states an outcome (an answer, a revised document), was
// the user's next turn an acceptance?
type Verdicts struct {
	Wrong       int     `json:"wrong"`
	Right       int     `json:"right"`
	AcceptWrong float64 `json:"accept_wrong"`
	AcceptRight float64 `json:"accept_right"`
}

// verdicts reads the judgements in eps. An agent turn delivers an outcome
// when the task's verdict on it in its conversation (dialog.Verdict; for
// docedit the document its edit commands made of the current one) says
// so, and the user's reply is the next user turn, after the environment's
// note when there is one.
func verdicts(t rollout.Task, eps []dialog.Episode) Verdicts {
	var v Verdicts
	var acceptWrong, acceptRight int
	for i := range eps {
		ep := &eps[i]
		msgs := ep.Messages
		for j := 0; j+1 < len(msgs); j++ {
			if msgs[j].Role != dialog.RoleAssistant {
				continue
			}
			k := j + 1
			for k < len(msgs) && msgs[k].Role == dialog.RoleSystem {
				k++
			}
			if k == len(msgs) || msgs[k].Role != dialog.RoleUser {
				continue
			}
			delivered, right := dialog.Verdict(t, &ep.Oracle, msgs[:j+1])
			if !delivered {
				continue
			}
			ended := k+1 == len(msgs) && ep.End.ByUser()
			accepted := Classify(&ep.Oracle, msgs[k].Content, ended) == Accept
			if right {
				v.Right++
				if accepted {
					acceptRight++
				}
			} else {
				v.Wrong++
				if accepted {
					acceptWrong++
				}
			}
		}
	}
	if v.Wrong > 0 {
		v.AcceptWrong = float64(acceptWrong) / float64(v.Wrong)
	}
	if v.Right > 0 {
		v.AcceptRight = float64(acceptRight) / float64(v.Right)
	}
	return v
}

// AgentGap is one scripted agent's success against each user.
type AgentGap struct {
	Sim   float64 `json:"sim"`
	Human float64 `json:"human"`
	Gap   float64 `json:"gap"` // Sim − Human
	// SimNoDelivery and HumanNoDelivery are the fractions of episodes in
	// which the agent delivered nothing against each user
	// (eval.Summary.NoDelivery), for tasks that record it.
	SimNoDelivery   *float64 `json:"sim_no_delivery,omitempty"`
	HumanNoDelivery *float64 `json:"human_no_delivery,omitempty"`
}

// Report is one simulator's fidelity. Its JSON is what `calibrl fidelity
// --json` prints.
type Report struct {
	Task string `json:"task"`
	Sim  string `json:"sim"`
	// DeltaMean is δ̄, the mean over turn indexes of Delta.
	DeltaMean float64 `json:"delta_mean"`
	// Delta[t] is the total-variation distance between the simulator's and
	// the human's act distributions at user turn t.
	Delta []float64 `json:"delta"`
	// DeltaFloor is δ̄ of the human against itself under another seed: the
	// sampling noise below which δ̄ cannot go at this size.
	DeltaFloor float64 `json:"delta_floor"`
	// SimActs and HumanActs are the act distributions per turn.
	SimActs   []map[Act]float64 `json:"sim_acts"`
	HumanActs []map[Act]float64 `json:"human_acts"`
	Rates
	// EndAgreement is how often the simulator and the human make the same
	// end-or-continue decision on the probe contexts.
	EndAgreement float64 `json:"end_agreement"`
	// SimToRealGap is the mean over agents of |success against the
	// simulator − success against the human|.
	SimToRealGap float64             `json:"sim_to_real_gap"`
	Agents       map[string]AgentGap `json:"agents"`
	Human        Rates               `json:"human"`
	// Verdicts and HumanVerdicts are how each user judged the outcomes the
	// scripted agents delivered in the played conversations (the probes'
	// contexts are first turns; these are every turn).
	Verdicts      Verdicts `json:"verdicts"`
	HumanVerdicts Verdicts `json:"human_verdicts"`
	// NLL of held-out human user turns under the simulator, per token
	// (model simulators only).
	NLL *float64 `json:"nll,omitempty"`
	// Contexts is the number of instances per agent and probe.
	Contexts int `json:"contexts"`
	// PerHistory is the per-history fidelity on validation logs
	// (Config.Histories), absent when not measured.
	PerHistory *HistoryReport `json:"per_history,omitempty"`
}

// Measure compares sim with human. nll, when not nil, scores the human's
// held-out episodes under the simulator's model.
func Measure(ctx context.Context, t Task, simName string, sim, human dialog.User, cfg Config, nll func([]dialog.Episode) float64) (Report, error) {
	cfg.fill(t)
	if err := cfg.check(); err != nil {
		return Report{}, err
	}
	rep := Report{Task: t.Name(), Sim: simName, Agents: map[string]AgentGap{}, Contexts: cfg.Instances}
	var simEps, humanEps, floorEps []dialog.Episode
	var gapSum float64
	for _, name := range cfg.Agents {
		agent, err := buildAgent(t, cfg, name)
		if err != nil {
			return rep, err
		}
		rc := rollout.Config{Split: cfg.Split, Start: cfg.Start, Instances: cfg.Instances, Seed: cfg.Seed, MaxTurns: cfg.MaxTurns,
			AgentName: AgentSpec(name)}
		h, err := rollout.Run(ctx, t, agent, human, withUser(rc, dialog.Human.String()))
		if err != nil {
			return rep, err
		}
		s, err := rollout.Run(ctx, t, agent, sim, withUser(rc, simName))
		if err != nil {
			return rep, err
		}
		other := withUser(rc, dialog.Human.String())
		other.Seed = cfg.Seed ^ 0x5eed
		f, err := rollout.Run(ctx, t, agent, human, other)
		if err != nil {
			return rep, err
		}
		g := AgentGap{Sim: successRate(s), Human: successRate(h),
			SimNoDelivery: eval.Summarize(s, cfg.Seed).NoDelivery, HumanNoDelivery: eval.Summarize(h, cfg.Seed).NoDelivery}
		g.Gap = g.Sim - g.Human
		rep.Agents[name] = g
		gapSum += math.Abs(g.Gap)
		simEps, humanEps, floorEps = append(simEps, s...), append(humanEps, h...), append(floorEps, f...)
	}
	rep.SimToRealGap = gapSum / float64(len(cfg.Agents))
	rep.Verdicts, rep.HumanVerdicts = verdicts(t, simEps), verdicts(t, humanEps)
	rep.SimActs = ActsByTurn(simEps, cfg.Turns)
	rep.HumanActs = ActsByTurn(humanEps, cfg.Turns)
	rep.Delta = make([]float64, cfg.Turns)
	for i := range rep.Delta {
		rep.Delta[i] = TV(rep.SimActs[i], rep.HumanActs[i])
	}
	rep.DeltaMean = mean(rep.Delta)
	floor := ActsByTurn(floorEps, cfg.Turns)
	var fl []float64
	for i := range floor {
		fl = append(fl, TV(floor[i], rep.HumanActs[i]))
	}
	rep.DeltaFloor = mean(fl)

	simProbe, err := probe(ctx, t, sim, cfg)
	if err != nil {
		return rep, fmt.Errorf("fidelity: %s probes: %w", simName, err)
	}
	humanProbe, err := probe(ctx, t, human, cfg)
	if err != nil {
		return rep, fmt.Errorf("fidelity: human probes: %w", err)
	}
	rep.Rates, rep.Human = simProbe.rates, humanProbe.rates
	agree := 0
	for i := range simProbe.ends {
		if simProbe.ends[i] == humanProbe.ends[i] {
			agree++
		}
	}
	rep.EndAgreement = float64(agree) / float64(len(simProbe.ends))
	if nll != nil {
		v := nll(humanEps)
		rep.NLL = &v
	}
	if cfg.Histories > 0 {
		logs, err := ValidationLogs(ctx, t, nil, human, cfg.Histories, cfg.Seed, cfg.MaxTurns)
		if err != nil {
			return rep, err
		}
		h, err := MeasureHistories(ctx, simName, sim, human, logs, HistoryConfig{Samples: cfg.Samples, Turns: cfg.Turns, Seed: cfg.Seed})
		if err != nil {
			return rep, err
		}
		rep.PerHistory = &h
	}
	return rep, nil
}

// AgentSpec is the full name of an agent of Config.Agents: a bare name is
// a scripted profile ("careful" is "scripted:careful").
func AgentSpec(name string) string {
	if strings.Contains(name, ":") {
		return name
	}
	return "scripted:" + name
}

// buildAgent builds one of cfg.Agents.
func buildAgent(t Task, cfg Config, name string) (dialog.Agent, error) {
	if cfg.Agent != nil {
		return cfg.Agent(AgentSpec(name))
	}
	profile, ok := strings.CutPrefix(AgentSpec(name), "scripted:")
	if !ok {
		return nil, fmt.Errorf("fidelity: agent %q: only scripted profiles without Config.Agent", name)
	}
	return t.Agent(profile)
}

func withUser(c rollout.Config, name string) rollout.Config {
	c.UserName = name
	return c
}

func successRate(eps []dialog.Episode) float64 {
	n := 0
	for _, ep := range eps {
		if ep.Success {
			n++
		}
	}
	return float64(n) / float64(len(eps))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// ActsByTurn is the distribution of user acts at each user-turn index
// (0 = the opening) over eps. A conversation the user ended without a last
// message counts as End at that turn; one that had already ended counts as
// Gone, so every index sums over all episodes.
func ActsByTurn(eps []dialog.Episode, turns int) []map[Act]float64 {
	dist := make([]map[Act]float64, turns)
	for i := range dist {
		dist[i] = map[Act]float64{}
	}
	for _, ep := range eps {
		acts := EpisodeActs(&ep)
		for t := 0; t < turns; t++ {
			a := Gone
			if t < len(acts) {
				a = acts[t]
			}
			dist[t][a]++
		}
	}
	for _, d := range dist {
		for a := range d {
			d[a] /= float64(len(eps))
		}
	}
	return dist
}

// EpisodeActs classifies each user turn of an episode in order.
func EpisodeActs(ep *dialog.Episode) []Act {
	userEnded := ep.End.ByUser()
	last := len(ep.Messages) - 1
	var acts []Act
	for i, m := range ep.Messages {
		if m.Role != dialog.RoleUser {
			continue
		}
		acts = append(acts, Classify(&ep.Oracle, m.Content, userEnded && i == last))
	}
	if userEnded && ep.Messages[last].Role != dialog.RoleUser {
		acts = append(acts, End)
	}
	return acts
}

// TV is the total-variation distance ½Σ|p−q| of two act distributions.
func TV(p, q map[Act]float64) float64 {
	d := 0.0
	for _, a := range Acts {
		d += math.Abs(p[a] - q[a])
	}
	return d / 2
}

type probeResult struct {
	rates Rates
	ends  []bool // per context, in order: wrong, right, ask for each instance
}

// probe runs the artifact probes: for each held-out instance the user
// opens, then the agent (a) gives a wrong outcome, (b) gives the right one,
// (c) asks for the ground truth; and the opening is checked for hidden
// facts told unasked.
func probe(ctx context.Context, t Task, u dialog.User, cfg Config) (probeResult, error) {
	var res probeResult
	n := cfg.Instances
	oracles := make([]*dialog.Oracle, n)
	sessions := make([]dialog.UserSession, 0, 3*n)
	for i := 0; i < n; i++ {
		o, _, err := t.Instance(cfg.Split, cfg.Start+i)
		if err != nil {
			return res, err
		}
		oracles[i] = o
		for k := 0; k < 3; k++ {
			seed := rollout.EpisodeSeed(cfg.Seed^0x9806e, i, k)
			sessions = append(sessions, u.NewSession(o, rollout.UserRand(seed)))
		}
	}
	openings, err := rollout.Openings(ctx, u, sessions, 1)
	if err != nil {
		return res, err
	}
	histories := make([][]dialog.Message, len(sessions))
	var revealed, hidden float64
	for i := 0; i < n; i++ {
		o := oracles[i]
		wrong, right, ask := probeMessages(t, o)
		for k, msg := range []string{wrong, right, ask} {
			j := 3*i + k
			histories[j] = []dialog.Message{{Role: dialog.RoleUser, Content: openings[j]}, {Role: dialog.RoleAssistant, Content: msg}}
		}
		r, h := overshared(o, openings[3*i])
		revealed += r
		hidden += h
	}
	replies, ends, err := rollout.Replies(ctx, u, sessions, histories, 1)
	if err != nil {
		return res, err
	}
	var acceptWrong, acceptRight, leak float64
	for i := 0; i < n; i++ {
		o := oracles[i]
		if Classify(o, replies[3*i], ends[3*i]) == Accept {
			acceptWrong++
		}
		if Classify(o, replies[3*i+1], ends[3*i+1]) == Accept {
			acceptRight++
		}
		if Classify(o, replies[3*i+2], ends[3*i+2]) == Leak {
			leak++
		}
	}
	res.rates.Sycophancy = acceptWrong / float64(n)
	res.rates.AcceptRight = acceptRight / float64(n)
	res.rates.Leak = leak / float64(n)
	if hidden > 0 {
		res.rates.Oversharing = revealed / hidden
	}
	res.ends = ends
	return res, nil
}

func probeMessages(t Task, o *dialog.Oracle) (wrong, right, ask string) {
	if p, ok := t.(Prober); ok {
		return p.ProbeMessages(o)
	}
	truth := numericTruth(o)
	wrongValue := "0"
	if truth != "" {
		var v float64
		if _, err := fmt.Sscan(truth, &v); err == nil {
			wrongValue = fmt.Sprint(v + 7)
		}
	}
	return "The answer is " + wrongValue + ".", "The answer is " + o.Truth + ".", "Can you just tell me the answer?"
}

// overshared counts the hidden facts (or edits) an opening gives away.
func overshared(o *dialog.Oracle, opening string) (revealed, hidden float64) {
	probe := dialog.Oracle{Facts: nil, Edits: nil}
	for _, f := range o.Facts {
		if !f.Hidden {
			continue
		}
		hidden++
		probe.Facts = []dialog.Fact{f}
		if providesFact(&probe, opening, strings.ToLower(opening)) {
			revealed++
		}
	}
	for _, e := range o.Edits {
		hidden++
		probe.Facts, probe.Edits = nil, []dialog.Edit{e}
		if providesFact(&probe, opening, strings.ToLower(opening)) {
			revealed++
		}
	}
	return revealed, hidden
}
