// Package support is the support-desk task, in the family of τ-bench: a
// user wants a change made to their records (cancel an order, move a
// booking to another date, update the email on their account), holds the
// identifiers the change needs (their account id, the order or booking,
// the new value) and gives each only when asked; the agent changes the
// database through tool calls the environment executes, and is rewarded 1
// when the final database is the one the user's goal makes: the right
// change made and nothing else touched, as τ-bench scores it.
//
// Instances are procedural and embedded: a small database per instance
// (one account, a few orders and bookings) drawn from the seed, the
// language templated and short, so the embedded models can learn it. At
// the default level some users hold two goals, and some change their
// mind once: the goal they open with is replaced by another after they
// give their account id. The package holds the task's scripted users, the
// human proxy ("human") and the prompted-style simulator ("naive"), and
// its scripted reference agents.
package support

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/hashsplit"
	"github.com/calibrl/calibrl/task/persona"
)

// Name is the task's registry name.
const Name = "support"

// MaxGoals bounds Config.Goals.
const MaxGoals = 8

// Config holds the task's knobs.
type Config struct {
	// Spec is the task name that rebuilds this task ("support:easy"),
	// which its episodes record; package task sets it (default the
	// family's name).
	Spec string
	// Digits is the width of an id's number (default 4: "A-3817"; 2..6).
	Digits int
	// Orders and Bookings are how many of each an account has (default 3
	// and 2; 1..16 each).
	Orders, Bookings int
	// Goals is how many changes each user wants (default 1; 1..MaxGoals).
	// The horizon levels raise it.
	Goals int
	// TwoGoals and Switch are, when Goals is 1, the chance that a user
	// holds two goals of different kinds, and that a user changes their
	// mind once (default 0.25 each; their sum at most 1).
	TwoGoals, Switch float64
	// Seed offsets every instance and every row of the database (default
	// 0), giving a different but equally deterministic world.
	Seed uint64
	// Naive configures the "naive" user.
	Naive NaiveConfig
	// UserLedger gives the learned user simulator its own ledger
	// (Task.UserNotes): after each agent turn that asks for an id or a
	// new value the user holds, a note to the simulator alone stating it
	// exactly. Default false; a task name turns it on with ":userledger"
	// ("support:easy:userledger").
	UserLedger bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Digits: 4, Orders: 3, Bookings: 2, Goals: 1, TwoGoals: 0.25, Switch: 0.25, Naive: DefaultNaiveConfig()}
}

// Validate reports the first bad knob.
func (c *Config) Validate() error {
	switch {
	case c.Digits < 2 || c.Digits > 6:
		return fmt.Errorf("support: digits %d not in 2..6", c.Digits)
	case c.Orders < 1 || c.Orders > 16 || c.Bookings < 1 || c.Bookings > 16:
		return fmt.Errorf("support: %d orders and %d bookings, each must be in 1..16", c.Orders, c.Bookings)
	case c.Goals < 1 || c.Goals > MaxGoals:
		return fmt.Errorf("support: goals %d not in 1..%d", c.Goals, MaxGoals)
	case !(c.TwoGoals >= 0 && c.Switch >= 0 && c.TwoGoals+c.Switch <= 1):
		return fmt.Errorf("support: two-goal rate %g and switch rate %g must be ≥ 0 and sum to at most 1", c.TwoGoals, c.Switch)
	}
	if err := c.Naive.Validate(); err != nil {
		return fmt.Errorf("support: %w", err)
	}
	return nil
}

func (c *Config) db() db {
	return db{seed: c.Seed, digits: c.Digits, orders: c.Orders, bookings: c.Bookings}
}

// Task is the support task. Build it with New.
type Task struct {
	cfg Config
	d   db
}

// New builds the task.
func New(cfg Config) (*Task, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Task{cfg: cfg, d: cfg.db()}, nil
}

// Name returns "support".
func (t *Task) Name() string { return Name }

// Spec is the task name that rebuilds t (Config.Spec).
func (t *Task) Spec() string {
	if t.cfg.Spec == "" {
		return Name
	}
	return t.cfg.Spec
}

// agentInstructions is every agent's system prompt.
const agentInstructions = "You are a support agent. Ask the user for each id you need. " +
	"Use the tools: [lookup account A-1], [cancel order O-1], [change booking B-1 date=YYYY-MM-DD], [change account A-1 email=X]."

// Instance returns instance index of split, drawn from a generator seeded
// by (Config.Seed, split, index); a draw whose instruction hashes to the
// other split is redrawn.
func (t *Task) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	stream, err := dialog.SplitStream(split)
	if err != nil {
		return nil, nil, fmt.Errorf("support: %w", err)
	}
	if index < 0 {
		return nil, nil, fmt.Errorf("support: negative instance index %d", index)
	}
	view := &dialog.View{Task: Name, Instructions: agentInstructions}
	id := fmt.Sprintf("%s/%s/%d", Name, split, index)
	for attempt := uint64(0); attempt < 256; attempt++ {
		rng := rand.New(rand.NewPCG(t.cfg.Seed^uint64(index)*0x9e3779b97f4a7c15, stream<<8|attempt))
		p, ok := t.draw(rng)
		if !ok || hashsplit.Of(instruction(p)) != split {
			continue
		}
		return t.oracle(p, id, split, rng), view, nil
	}
	return nil, nil, fmt.Errorf("instance %s: no draw landed in split %s", id, split)
}

// draw draws an account and the user's plan on it; ok is false when the
// account has too few rows for the goals (the caller redraws).
func (t *Task) draw(rng *rand.Rand) (plan, bool) {
	d := t.d
	var acct string
	for acct == "" {
		if id := d.id(kindAccount, rng.Uint64()); d.exists(kindAccount, id) {
			acct = id
		}
	}
	a := d.accountRow(acct)
	kinds := []string{goalCancel, goalDate, goalEmail}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	var want []string // the goals' kinds; with a switch, the dropped one first
	switched := false
	switch r := rng.Float64(); {
	case t.cfg.Goals > 1:
		// The horizon levels: cancels and date changes, alternating.
		first := rng.IntN(2)
		for i := range t.cfg.Goals {
			want = append(want, []string{goalCancel, goalDate}[(first+i)%2])
		}
	case r < t.cfg.TwoGoals:
		want = kinds[:2]
	case r < t.cfg.TwoGoals+t.cfg.Switch:
		want, switched = kinds[:2], true
	default:
		want = kinds[:1]
	}
	placed := []string{}
	for _, o := range a.Orders {
		if d.orderStatus(o) == statusPlaced {
			placed = append(placed, o)
		}
	}
	bookings := append([]string(nil), a.Bookings...)
	rng.Shuffle(len(placed), func(i, j int) { placed[i], placed[j] = placed[j], placed[i] })
	rng.Shuffle(len(bookings), func(i, j int) { bookings[i], bookings[j] = bookings[j], bookings[i] })
	var goals []goal
	for _, k := range want {
		g := goal{Kind: k}
		switch k {
		case goalCancel:
			if len(placed) == 0 {
				return plan{}, false
			}
			g.ID, placed = placed[0], placed[1:]
		case goalDate:
			if len(bookings) == 0 {
				return plan{}, false
			}
			g.ID, bookings = bookings[0], bookings[1:]
			for g.Value == "" || g.Value == d.bookingDate(g.ID) {
				g.Value = fmt.Sprintf("2026-%02d-%02d", 1+rng.IntN(12), 1+rng.IntN(28))
			}
		case goalEmail:
			g.ID = acct
			for g.Value == "" || g.Value == a.Email {
				g.Value = fmt.Sprintf("%s%d@%s", a.Name, 10+rng.IntN(90), domains[rng.IntN(len(domains))])
			}
		}
		goals = append(goals, g)
	}
	p := plan{Account: acct, Goals: goals}
	if switched {
		p.Dropped, p.Goals = &goals[0], goals[1:]
	}
	return p, true
}

// instruction states the user's whole goal, every id in it.
func instruction(p plan) string {
	var parts []string
	for _, g := range p.Goals {
		parts = append(parts, spelled(g, p.Account))
	}
	return "My account id is " + p.Account + ". I want to " + strings.Join(parts, " and ") + "."
}

// openingGoals are the goals the user opens with: the dropped one in
// place of the first when the user changes their mind.
func (p plan) openingGoals() []goal {
	if p.Dropped == nil {
		return p.Goals
	}
	return append([]goal{*p.Dropped}, p.Goals[1:]...)
}

// truth is the calls that make every goal's change.
func (p plan) truth() string {
	var calls []string
	for _, g := range p.Goals {
		calls = append(calls, g.call().String())
	}
	return strings.Join(calls, " ")
}

func (t *Task) oracle(p plan, id, split string, rng *rand.Rand) *dialog.Oracle {
	extra, _ := json.Marshal(p) // a plan always marshals
	kinds := make([]string, len(p.Goals))
	for i, g := range p.Goals {
		kinds[i] = g.Kind
	}
	family := strings.Join(kinds, "+")
	if p.Dropped != nil {
		family = "switch"
	}
	o := &dialog.Oracle{
		Task: Name, ID: id, Split: split, Family: family,
		Instruction: instruction(p),
		Opening:     "I want to " + request(p.openingGoals()) + ".",
		Truth:       p.truth(),
		Solution:    "[lookup account " + p.Account + "] " + p.truth(),
		Persona:     persona.Draw(rng, persona.Human),
		Extra:       extra,
	}
	o.Facts = append(o.Facts, dialog.Fact{Key: "account", Text: "My account id is " + p.Account + ".", Value: p.Account, Cues: []string{"account"}, Hidden: true})
	for i, g := range p.Goals {
		n := fmt.Sprint(i + 1)
		switch g.Kind {
		case goalCancel:
			o.Facts = append(o.Facts, dialog.Fact{Key: "order" + n, Text: "The order is " + g.ID + ".", Value: g.ID, Cues: []string{"order"}, Hidden: true})
		case goalDate:
			o.Facts = append(o.Facts,
				dialog.Fact{Key: "booking" + n, Text: "The booking is " + g.ID + ".", Value: g.ID, Cues: []string{"booking"}, Hidden: true},
				dialog.Fact{Key: "date" + n, Text: "The new date is " + g.Value + ".", Value: g.Value, Cues: []string{"date"}, Hidden: true})
		case goalEmail:
			o.Facts = append(o.Facts, dialog.Fact{Key: "email" + n, Text: "The new email is " + g.Value + ".", Value: g.Value, Cues: []string{"email"}, Hidden: true})
		}
	}
	return o
}

// planOf reads the user's plan from the oracle.
func planOf(o *dialog.Oracle) (plan, error) {
	var p plan
	if err := json.Unmarshal(o.Extra, &p); err != nil {
		return p, fmt.Errorf("support: instance %s: extra: %w", o.ID, err)
	}
	if p.Account == "" || len(p.Goals) == 0 {
		return p, fmt.Errorf("support: instance %s: extra: no account or no goals", o.ID)
	}
	return p, nil
}

// expected is the database the user's goals make.
func (t *Task) expected(p plan) state {
	s := state{}
	for _, g := range p.Goals {
		t.d.exec(s, g.call())
	}
	return t.d.diff(s)
}

// Score replays every call of the agent's turns and compares the final
// database with the one the user's goals make: reward 1 when they are the
// same (every wanted change made, nothing else touched), else 0. Outcome
// is the changes made ("O-5520 cancelled"), "" for none.
func (t *Task) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	var turns []string
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			turns = append(turns, m.Content)
		}
	}
	got := t.d.replay(turns)
	sc := dialog.Score{Outcome: describe(got)}
	p, err := planOf(o)
	if err != nil {
		return sc
	}
	want := t.expected(p)
	if len(got) == len(want) {
		for f, v := range want {
			if got[f] != v {
				return sc
			}
		}
		sc.Reward, sc.Success = 1, true
	}
	return sc
}

// ScoreTurn judges the last agent turn in its conversation
// (dialog.TurnScorer): a turn delivers when it holds an action call, and
// its score is the database the whole conversation has made by then.
func (t *Task) ScoreTurn(o *dialog.Oracle, msgs []dialog.Message) (bool, dialog.Score) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != dialog.RoleAssistant {
		return false, dialog.Score{}
	}
	acted := false
	for _, c := range parseCalls(msgs[len(msgs)-1].Content) {
		acted = acted || c.action()
	}
	if !acted {
		return false, dialog.Score{}
	}
	return true, t.Score(o, msgs)
}

// User returns dialog.Human (the human proxy) or dialog.Naive (the prompted-style
// simulator with Config.Naive's artifact rates).
func (t *Task) User(kind dialog.UserKind) (dialog.User, error) {
	switch kind {
	case dialog.Human:
		return &Human{d: t.d}, nil
	case dialog.Naive:
		return NewNaive(t.d, t.cfg.Naive)
	}
	return nil, dialog.UnknownUser("support", kind)
}

// Tool returns the database tool every agent of the task uses
// (dialog.ToolOf).
func (t *Task) Tool() dialog.Tool { return Tool{d: t.d} }

// Environment returns the note that gives the results of calls an agent
// wrote without them (dialog.EnvironmentOf): what a model behind serve,
// which cannot run the tool mid-turn, reads them from.
func (t *Task) Environment() dialog.Environment { return Results{d: t.d} }

// Profiles lists the scripted agent profiles.
func (t *Task) Profiles() []string { return profileNames() }

// Agent returns a scripted agent by profile; its calls are answered by the
// task's tool as a model's are.
func (t *Task) Agent(profile string) (dialog.Agent, error) {
	a, err := newScripted(profile, t.cfg.Digits)
	if err != nil {
		return nil, err
	}
	return &dialog.ToolAgent{Agent: a, Apply: Tool{d: t.d}.Apply}, nil
}

// ProbeMessages gives the fidelity probes' agent turns (fidelity.Prober):
// an action on the wrong row, the right actions, and a request that the
// user spell out the change.
func (t *Task) ProbeMessages(o *dialog.Oracle) (wrong, right, ask string) {
	tool := Tool{d: t.d}
	p, err := planOf(o)
	if err != nil {
		return "Done.", "Done.", msgAskGoal
	}
	// The first goal's change on a row that is not the user's (an
	// order), or to a value the user did not ask for (a date, an email).
	w := p.Goals[0].call()
	switch w.Kind {
	case kindOrder:
		w.ID = t.d.id(kindOrder, t.d.hash("probe", w.ID))
	case kindBooking:
		w.Value = "2027-01-01"
	case kindAccount:
		w.Value = "x" + w.Value
	}
	return tool.Apply(w.String() + " Done."), tool.Apply(p.truth() + " Done."), msgAskGoal
}
