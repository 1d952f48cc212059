package support

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// profiles describes the scripted agents. They read the opening's goals
// and the user's replies with the patterns the task writes them in (never
// the oracle).
var profiles = map[string]string{
	"careful":   "asks for the account id, looks the account up, asks for each row and new value in turn, runs the change and says it is done",
	"claimer":   "asks like careful, but first says the change is done without running it; runs it on its next turn",
	"hasty":     "runs the changes at once on guessed ids and values, without asking; guesses again when told it is wrong",
	"wrong-row": "asks for the account and looks it up, then changes the first order or booking listed instead of asking which",
	"seeker":    "asks the user to spell the change out and runs the calls it is given; otherwise guesses like hasty",
}

// profileNames lists the profiles in order.
func profileNames() []string { return slices.Sorted(maps.Keys(profiles)) }

// scripted is a scripted reference agent. Its conversations with the
// human proxy are the logged data later stages learn from, so its
// messages keep to a small, regular style.
type scripted struct {
	profile string
	digits  int
}

func newScripted(profile string, digits int) (*scripted, error) {
	if _, ok := profiles[profile]; !ok {
		return nil, fmt.Errorf("support: unknown agent profile %q (known: %s)", profile, strings.Join(profileNames(), ", "))
	}
	return &scripted{profile: profile, digits: digits}, nil
}

// NewSession starts one episode; the view is not needed.
func (a *scripted) NewSession(_ *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &agentSession{scripted: a, rng: rng}
}

type agentSession struct {
	*scripted
	rng *rand.Rand

	opened  bool
	kinds   []string // the goals' kinds, from the opening
	cur     int      // the goal being worked on
	acct    string
	looked  bool
	rows    []string // ids the account lookup listed (wrong-row)
	target  string   // the current goal's row
	value   string   // the current goal's new value
	asked   string   // the question of the last turn ("" for none)
	reasked bool
	claimed bool // claimer: said the current goal was done without a call
	sought  bool // seeker: asked for the whole change
	// stray is an id the user gave that the account lookup did not list
	// (careful and claimer check): the next question says so.
	stray string
}

var (
	idRE     = regexp.MustCompile(`\b[AOB]-\d+\b`)
	dateIn   = regexp.MustCompile(`\b2\d{3}-\d{2}-\d{2}\b`)
	emailIn  = regexp.MustCompile(`[a-z0-9._]+@[a-z0-9-]+\.[a-z]+`)
	resultIn = regexp.MustCompile(` => \(([^()]*)\)`)
)

// questions are the careful questions, by the fact they ask for.
var questions = map[string]string{
	"account": "What is your account id?",
	"order":   "Which order do you want to cancel?",
	"booking": "Which booking do you want to change?",
	"date":    "What is the new date?",
	"email":   "What is the new email?",
}

// Act returns the agent's next message.
func (s *agentSession) Act(_ context.Context, history []dialog.Message) (string, error) {
	if len(history) == 0 {
		return "", fmt.Errorf("support: agent called with an empty conversation")
	}
	last := history[len(history)-1].Content
	for i := len(history) - 1; i > 0 && dialog.IsNote(history[i]); i-- {
		last = history[i-1].Content
	}
	if !s.opened {
		s.opened = true
		s.kinds = readGoals(last)
		if len(s.kinds) > 0 {
			s.absorb(last, "") // an opening that spells the change out
		}
	} else {
		s.absorb(last, lastAgent(history))
	}
	if len(s.kinds) == 0 {
		return "Sorry, what do you want me to do? I can cancel an order, change a booking or update an email.", nil
	}
	if s.cur >= len(s.kinds) {
		return "Is there anything else?", nil
	}
	switch s.profile {
	case "hasty":
		return s.guess(), nil
	case "seeker":
		if !s.sought {
			s.sought = true
			return msgAskGoal, nil
		}
		if calls := parseCalls(last); len(calls) > 0 {
			var b []string
			for _, c := range calls {
				b = append(b, c.String())
			}
			s.cur = len(s.kinds)
			return strings.Join(b, " ") + " Done.", nil
		}
		return s.guess(), nil
	}
	return s.next(), nil
}

// absorb takes what the user's reply gives: ids by their letter, a date,
// an email, a change of mind; and the rows its own last lookup listed.
func (s *agentSession) absorb(msg, mine string) {
	if m := resultIn.FindStringSubmatch(mine); m != nil && len(s.rows) == 0 {
		s.rows = idRE.FindAllString(m[1], -1)
	}
	if strings.Contains(msg, "instead") {
		if k := readGoals(msg); len(k) > 0 {
			s.kinds = append(append([]string(nil), k...), s.kinds[s.cur+1:]...)
			s.cur, s.target, s.value = 0, "", ""
			return
		}
	}
	kind := s.kinds
	got := false
	for _, id := range idRE.FindAllString(msg, -1) {
		switch {
		case id[0] == 'A' && s.acct == "":
			s.acct, got = id, true
		case id[0] == 'O' && s.cur < len(kind) && kind[s.cur] == goalCancel:
			s.target, got = id, true
		case id[0] == 'B' && s.cur < len(kind) && kind[s.cur] == goalDate:
			s.target, got = id, true
		}
	}
	if s.cur < len(kind) {
		if d := dateIn.FindString(msg); d != "" && kind[s.cur] == goalDate && s.target != "" {
			s.value, got = d, true
		}
		if e := emailIn.FindString(strings.ToLower(msg)); e != "" && kind[s.cur] == goalEmail {
			s.value, got = e, true
		}
	}
	if got {
		s.asked, s.reasked = "", false
	}
	if s.target != "" && len(s.rows) > 0 && s.profile != "wrong-row" && !contains(s.rows, s.target) {
		s.stray, s.target = s.target, ""
	}
}

// next is the careful way on from here: ask what is missing, else run the
// change and go on to the next goal; the claimer and wrong-row profiles
// differ where they act.
func (s *agentSession) next() string {
	if s.acct == "" {
		return s.ask("account")
	}
	prefix := ""
	if !s.looked {
		s.looked = true
		prefix = "[lookup account " + s.acct + "] "
		if s.profile == "wrong-row" {
			return prefix + "Let me see."
		}
	}
	return prefix + s.work()
}

// work asks for the current goal's next missing piece or acts on it.
func (s *agentSession) work() string {
	kind := s.kinds[s.cur]
	if s.profile == "wrong-row" && kind != goalEmail && s.target == "" {
		s.target = s.pickRow(kind)
	}
	stray := ""
	if s.stray != "" {
		stray, s.stray, s.asked = s.stray+" is not on your account. ", "", ""
	}
	switch {
	case kind == goalCancel && s.target == "":
		return stray + s.ask("order")
	case kind == goalDate && s.target == "":
		return stray + s.ask("booking")
	case kind == goalDate && s.value == "":
		return s.ask("date")
	case kind == goalEmail && s.value == "":
		return s.ask("email")
	}
	if s.profile == "claimer" && !s.claimed {
		s.claimed = true
		return "Done: your change is made."
	}
	c := goal{Kind: kind, ID: s.target, Value: s.value}
	if kind == goalEmail {
		c.ID = s.acct
	}
	s.cur++
	s.target, s.value, s.claimed = "", "", false
	msg := c.call().String() + " Done."
	if s.cur < len(s.kinds) {
		msg += " " + s.work()
	}
	return msg
}

// pickRow is wrong-row's choice: the first row of the kind its lookup
// listed, whichever the user meant.
func (s *agentSession) pickRow(kind string) string {
	letter := "O"
	if kind == goalDate {
		letter = "B"
	}
	var ids []string
	for _, id := range s.rows {
		if strings.HasPrefix(id, letter) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// ask asks for a fact, or says what it meant when the user asked back.
func (s *agentSession) ask(what string) string {
	q := questions[what]
	if s.asked == what && !s.reasked {
		s.reasked = true
		return "I mean: " + strings.ToLower(q[:1]) + q[1:]
	}
	s.asked, s.reasked = what, false
	return q
}

// guess runs every goal at once on made-up ids and values.
func (s *agentSession) guess() string {
	var calls []string
	for _, k := range s.kinds[s.cur:] {
		g := goal{Kind: k, ID: s.guessID(map[string]string{goalCancel: kindOrder, goalDate: kindBooking, goalEmail: kindAccount}[k])}
		switch k {
		case goalDate:
			g.Value = fmt.Sprintf("2026-%02d-%02d", 1+s.rng.IntN(12), 1+s.rng.IntN(28))
		case goalEmail:
			g.Value = fmt.Sprintf("%s%d@%s", pick(s.rng, firstNames), 10+s.rng.IntN(90), pick(s.rng, domains))
		}
		calls = append(calls, g.call().String())
	}
	return strings.Join(calls, " ") + " Done."
}

func (s *agentSession) guessID(kind string) string {
	return db{digits: s.digits}.id(kind, s.rng.Uint64())
}
