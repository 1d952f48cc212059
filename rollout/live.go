package rollout

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/calibrl/calibrl/dialog"
)

// The random streams of an episode. Its user draws from the PCG generator
// seeded (seed, UserStream) and its agent from (seed, AgentStream), seed
// being the episode's seed (EpisodeSeed, dialog.Episode.Seed): whoever
// seeds a session with a logged episode's seed on its stream replays that
// episode's dice (a served episode's user, a logged agent continuing a
// conversation, a served simulator's reply).
const (
	UserStream  uint64 = 1
	AgentStream uint64 = 2
)

// UserRand is the generator of the user of the episode seeded seed.
func UserRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, UserStream)) }

// AgentRand is the generator of the agent of the episode seeded seed.
func AgentRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, AgentStream)) }

// Rules are how an episode's turns are recorded besides what its players
// say, the same for every episode of a run.
type Rules struct {
	// Env notes each agent turn (dialog.Environment), recorded as a system
	// message after it, before the user answers; nil for none.
	Env dialog.Environment
	// CountTokens measures each message; nil means dialog.ApproxTokens.
	CountTokens func(string) int
}

// Live is one episode in play: its record so far and the sessions of its
// agent and user. An episode is opened (the user's first message), then
// alternates an agent turn (with the environment's note on it, when the
// rules have an environment) and a user turn until the user ends it or
// the agent has had Ep.MaxTurns turns, and is then finished (scored).
//
// Open, AgentTurn and UserTurn ask the episode's own sessions, one
// episode at a time. Opened, Said and Heard record a turn that was asked
// for elsewhere: by OpenAll, ActAll and ReplyAll, which ask many episodes
// at once, and by a server whose agent is its client (Exchange).
type Live struct {
	// Ep is the record: the episode's identity, its Messages and Turns
	// so far, and once Finish has run its end and score.
	Ep dialog.Episode
	// Agent is the agent's session; nil when the agent plays elsewhere.
	Agent dialog.AgentSession
	// User is the user's session.
	User dialog.UserSession

	rules Rules
	done  bool
}

// Begin starts ep, whose identity, oracle, view, seed and MaxTurns are
// set (MaxTurns 0 means DefaultMaxTurns): the user's session draws from
// UserRand(ep.Seed) and the agent's, when agent is not nil, from
// AgentRand(ep.Seed). The sessions read the oracle and view of the Live's
// own copy of ep.
func Begin(ep dialog.Episode, agent dialog.Agent, user dialog.User, r Rules) *Live {
	return begin(ep, agent, AgentRand(ep.Seed), user, UserRand(ep.Seed), r)
}

func begin(ep dialog.Episode, agent dialog.Agent, agentRand *rand.Rand, user dialog.User, userRand *rand.Rand, r Rules) *Live {
	if ep.MaxTurns <= 0 {
		ep.MaxTurns = DefaultMaxTurns
	}
	if r.CountTokens == nil {
		r.CountTokens = dialog.ApproxTokens
	}
	// Appending to a clipped slice copies it: the caller's array is never
	// written.
	ep.Messages = slices.Clip(ep.Messages)
	l := &Live{Ep: ep, rules: r}
	l.User = user.NewSession(&l.Ep.Oracle, userRand)
	if agent != nil {
		l.Agent = agent.NewSession(&l.Ep.View, agentRand)
	}
	return l
}

// Resume starts an episode from a logged conversation: ep is the logged
// episode with Messages cut to the prefix to continue from and MaxTurns
// the turn limit of the continuation. The agent's session draws from
// AgentRand(ep.Seed), the logged agent's own dice; the user's from
// UserRand(userSeed): ep.Seed replays the logged user, another seed
// continues the conversation with other dice (another user, as static
// RL's simulator in place of the logged person).
//
// Scripted players keep state between calls (facts asked for, patience
// left), so Resume walks them through the prefix and discards what they
// say: the logged messages stay. The agent acts before each of the
// prefix's agent turns, the last one included when the prefix ends with
// one (it then has read the user's last message, and does not know that
// the logged words there were not its own); the user opens and answers
// each agent turn that a user turn follows (after the environment's note
// on it, when there is one). When the prefix ends with a turn rather than
// a note on it and the rules have an environment, the environment notes
// that turn, as Said or Heard would have: after an agent turn the user
// then reads the document (or whatever the environment shows) that the
// turn left, after a reply the agent reads the ledger. Model-backed players
// (dialog.BatchAgent, dialog.BatchUser) read everything from the history
// they are given and are not walked through.
func Resume(ctx context.Context, ep dialog.Episode, agent dialog.Agent, user dialog.User, userSeed uint64, r Rules) (*Live, error) {
	l := begin(ep, agent, AgentRand(ep.Seed), user, UserRand(userSeed), r)
	msgs := l.Ep.Messages
	l.Ep.Turns = 0
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			l.Ep.Turns++
		}
	}
	if _, batch := agent.(dialog.BatchAgent); !batch && l.Agent != nil {
		for i, m := range msgs {
			if m.Role == dialog.RoleAssistant {
				if _, err := l.Agent.Act(ctx, msgs[:i]); err != nil {
					return nil, fmt.Errorf("rollout: replay agent: %w", err)
				}
			}
		}
	}
	if _, batch := user.(dialog.BatchUser); !batch {
		if _, err := l.User.Open(ctx); err != nil {
			return nil, fmt.Errorf("rollout: replay user: %w", err)
		}
		for i := 1; i < len(msgs); i++ {
			if msgs[i].Role == dialog.RoleUser && answers(msgs[:i]) {
				if _, _, err := l.User.Reply(ctx, msgs[:i]); err != nil {
					return nil, fmt.Errorf("rollout: replay user: %w", err)
				}
			}
		}
	}
	if n := len(msgs); n > 1 && !dialog.IsNote(msgs[n-1]) {
		l.note()
	}
	return l, nil
}

// answers reports whether a user turn after history h answers an agent
// turn: h ends with one, or with the environment's notes on one.
func answers(h []dialog.Message) bool {
	for i := len(h) - 1; i >= 0; i-- {
		if !dialog.IsNote(h[i]) {
			return h[i].Role == dialog.RoleAssistant
		}
	}
	return false
}

// Done reports that the episode is over: the user ended it, or the agent
// has had its MaxTurns turns and the user has answered the last.
func (l *Live) Done() bool { return l.done }

// Opened records the user's opening.
func (l *Live) Opened(text string) {
	l.add(dialog.RoleUser, text)
}

// Said records an agent turn and the environment's note on it, which it
// returns ("" for none).
func (l *Live) Said(text string) (note string) {
	l.add(dialog.RoleAssistant, text)
	l.Ep.Turns++
	return l.note()
}

// note records the environment's note on the last message, an agent turn
// or the user's reply to one, when the rules have an environment and it
// has something to say, and returns it.
func (l *Live) note() string {
	if l.rules.Env == nil {
		return ""
	}
	note := l.rules.Env.Respond(&l.Ep.View, l.Ep.Messages)
	if note != "" {
		l.add(dialog.RoleSystem, note)
	}
	return note
}

// Heard records the user's answer to the last agent turn: its text ("" for
// none: a user may end without a word), and whether the user ended the
// episode. The episode is over when the user ended it, for the reason the
// session gives (dialog.UserEnded when it gives none), or when the turn
// limit is reached. While it goes on, the environment's note on the
// reply is recorded after it and returned ("" for none): the agent reads
// it before its next turn (mathchat's ledger of the numbers told).
func (l *Live) Heard(text string, end bool) (note string) {
	if text != "" {
		l.add(dialog.RoleUser, text)
	}
	switch {
	case end:
		l.done, l.Ep.End = true, endReason(l.User)
	case l.Ep.Turns >= l.Ep.MaxTurns:
		l.done, l.Ep.End = true, dialog.MaxTurns
	case text != "":
		return l.note()
	}
	return ""
}

func (l *Live) add(role dialog.Role, text string) {
	l.Ep.Messages = append(l.Ep.Messages, dialog.Message{Role: role, Content: text, Tokens: l.rules.CountTokens(text)})
}

// Open has the user write the opening. Errors are the session's own:
// the caller names the episode.
func (l *Live) Open(ctx context.Context) error {
	text, err := l.User.Open(ctx)
	if err != nil {
		return err
	}
	l.Opened(text)
	return nil
}

// AgentTurn has the agent's session take its turn.
func (l *Live) AgentTurn(ctx context.Context) error {
	text, err := l.Agent.Act(ctx, l.Ep.Messages)
	if err != nil {
		return err
	}
	l.Said(text)
	return nil
}

// UserTurn has the user answer the last agent turn.
func (l *Live) UserTurn(ctx context.Context) error {
	text, end, err := l.User.Reply(ctx, l.Ep.Messages)
	if err != nil {
		return err
	}
	l.Heard(text, end)
	return nil
}

// Exchanged is what follows an agent turn: the environment's note on it,
// the user's reply, the environment's note on the reply ("" for none
// and once the episode is over) and whether the user ended the episode.
type Exchanged struct {
	Note, Reply, ReplyNote string
	End                    bool
}

// Exchange records text, an agent turn written elsewhere, and has the
// user answer it. When the user cannot answer, the record is left as it
// was, so that the turn may be sent again.
func (l *Live) Exchange(ctx context.Context, text string) (Exchanged, error) {
	before, turns := len(l.Ep.Messages), l.Ep.Turns
	x := Exchanged{Note: l.Said(text)}
	var err error
	if x.Reply, x.End, err = l.User.Reply(ctx, l.Ep.Messages); err != nil {
		l.Ep.Messages, l.Ep.Turns = l.Ep.Messages[:before], turns
		return Exchanged{}, err
	}
	x.ReplyNote = l.Heard(x.Reply, x.End)
	return x, nil
}

// Finish scores the episode with the task's scorer and totals its
// tokens. An episode still in play ends here, at the turn limit. A user
// who "accepts" a wrong outcome did not solve the task: the end is then
// dialog.UserEnded, not dialog.Solved.
func (l *Live) Finish(s dialog.Scorer) {
	ep := &l.Ep
	if !l.done {
		l.done, ep.End = true, dialog.MaxTurns
	}
	sc := s.Score(&ep.Oracle, ep.Messages)
	ep.Outcome, ep.Reward, ep.Success, ep.Metrics = sc.Outcome, sc.Reward, sc.Success, sc.Metrics
	ep.Tokens = 0
	for _, m := range ep.Messages {
		ep.Tokens += m.Tokens
	}
	if ep.End == dialog.Solved && !ep.Success {
		ep.End = dialog.UserEnded
	}
}

// endReason asks the session why it ended, when it can say.
func endReason(s dialog.UserSession) dialog.EndReason {
	if r, ok := s.(interface{ EndReason() dialog.EndReason }); ok {
		if reason := r.EndReason(); reason != "" {
			return reason
		}
	}
	return dialog.UserEnded
}

// Playing is the episodes of eps still in play, in order.
func Playing(eps []*Live) []*Live {
	var a []*Live
	for _, l := range eps {
		if !l.done {
			a = append(a, l)
		}
	}
	return a
}
