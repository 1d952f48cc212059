package chatlm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/tokenizer"
)

// Agent is a policy backed by a chat model: the lm:DIR agent. It answers
// a rollout step for all conversations in one batch.
type Agent struct {
	Model *Model
	Gen   GenConfig
	// Tool, when set, writes its part of every turn (the task's
	// calculator: dialog.ToolOf).
	Tool dialog.Tool

	mu sync.Mutex // the engine model is not safe for concurrent use
}

// AgentSession is one episode of an Agent. Turns records what the model
// sampled for each of its turns, in order, for the trainers.
type AgentSession struct {
	agent *Agent
	view  *dialog.View
	rng   *rand.Rand
	Turns []Turn
	kv    *lm.KV // the conversation's key/value cache; nil unless kept
}

// KeepContext makes the session keep the model's key/value cache of its
// conversation from turn to turn, so that a turn reads only the messages
// that are new to it; the turns are the same. Whoever calls it promises
// to call Release when the episode is over (rollout.Play does).
func (s *AgentSession) KeepContext() {
	if s.kv == nil {
		s.kv = s.agent.Model.LM.NewKV()
	}
}

// Release lets the cache KeepContext kept go.
func (s *AgentSession) Release() {
	if s.kv != nil {
		s.agent.mu.Lock()
		s.kv.Release()
		s.agent.mu.Unlock()
		s.kv = nil
	}
}

// NewSession starts an episode.
func (a *Agent) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &AgentSession{agent: a, view: v, rng: rng}
}

// Act answers one conversation.
func (s *AgentSession) Act(ctx context.Context, history []dialog.Message) (string, error) {
	out, err := s.agent.ActBatch(ctx, []dialog.AgentSession{s}, [][]dialog.Message{history})
	if err != nil {
		return "", err
	}
	return out[0], nil
}

// ActBatch answers a whole rollout step.
func (a *Agent) ActBatch(ctx context.Context, sessions []dialog.AgentSession, histories [][]dialog.Message) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	convs := make([][]tokenizer.Message, len(sessions))
	rngs := make([]*rand.Rand, len(sessions))
	own := make([]*AgentSession, len(sessions))
	kvs := make([]*lm.KV, len(sessions))
	for i, s := range sessions {
		own[i] = s.(*AgentSession)
		convs[i] = AgentMessages(own[i].view, histories[i])
		rngs[i], kvs[i] = own[i].rng, own[i].kv
	}
	a.mu.Lock()
	turns, err := a.Model.GenerateKV(convs, string(dialog.RoleAssistant), a.Gen, rngs, a.Tool, kvs)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(turns))
	for i, t := range turns {
		own[i].Turns = append(own[i].Turns, t)
		out[i] = t.Text
	}
	return out, nil
}

// Sampled lines up the session's recorded turns with the agent messages of
// a conversation as AgentMessages renders it (system turn first), for
// Model.Encode.
func (s *AgentSession) Sampled(history []dialog.Message) []*Turn {
	sampled := make([]*Turn, len(history)+1)
	k := 0
	for i, m := range history {
		if m.Role == dialog.RoleAssistant && k < len(s.Turns) {
			sampled[i+1] = &s.Turns[k]
			k++
		}
	}
	return sampled
}

// User is a user simulator backed by a chat model: the learned:DIR user
// (Oracle true) or its no-oracle-context ablation (Oracle false). It ends
// the episode by emitting <|done|>. A reply cut by the length limit is
// kept as far as it goes; an empty or garbled one reads as an unclear turn;
// nothing a model writes can crash an episode.
type User struct {
	Model  *Model
	Oracle bool
	// Judge, when the simulator was trained with one, marks delivered
	// outcomes (UserMessages).
	Judge Judge
	Gen   GenConfig
	// Copy holds every number (dialog.CopyNumbers) or every whole value
	// (dialog.CopyValues) a turn states to the ones its problem holds
	// (copy.go): the user spec learned+copy:DIR. Default CopyOff.
	Copy dialog.Copy
	// ValueWords are, with CopyValues, the words that begin a value
	// without a digit or an '@' (ValueWordsOf: support's names): a run
	// that is one must begin a held value. CopyAs sets them with Copy.
	ValueWords []string

	mu          sync.Mutex // guards the model, copyTokens and valueTokens
	copyTokens  *copyTokens
	valueTokens *valueTokens
}

type userSession struct {
	user   *User
	oracle *dialog.Oracle
	rng    *rand.Rand
	kv     *lm.KV // as AgentSession's
	copier copier // with Copy, built at its first turn
}

// copier is one conversation's copy constraint: the ids that may follow
// a turn whose text so far is text, nil for any.
type copier interface {
	allow(text string) []int
}

// copiers builds the sorted token texts of u.Copy's constraint once per
// simulator and returns how a conversation's is built. The caller holds
// u.mu.
func (u *User) copiers() (func(o *dialog.Oracle) copier, error) {
	vocab := u.Model.LM.Config.VocabSize
	switch u.Copy {
	case dialog.CopyNumbers:
		if u.copyTokens == nil {
			u.copyTokens = newCopyTokens(u.Model.Tok, vocab)
		}
		return func(o *dialog.Oracle) copier { return newNumberCopier(u.copyTokens, o) }, nil
	case dialog.CopyValues:
		if u.valueTokens == nil {
			u.valueTokens = newValueTokens(u.Model.Tok, vocab, u.ValueWords)
		}
		return func(o *dialog.Oracle) copier { return newValueCopier(u.valueTokens, o) }, nil
	}
	return nil, fmt.Errorf("chatlm: simulator copy %v unknown", u.Copy)
}

// CopyAs holds u to what its problem holds as task t copies it with kind
// c: Copy c, and with CopyValues the task's value words.
func (u *User) CopyAs(t any, c dialog.Copy) {
	u.Copy, u.ValueWords = c, CopyWords(t, c)
}

// KeepContext is AgentSession.KeepContext for the simulator.
func (s *userSession) KeepContext() {
	if s.kv == nil {
		s.kv = s.user.Model.LM.NewKV()
	}
}

// Release lets the cache KeepContext kept go.
func (s *userSession) Release() {
	if s.kv != nil {
		s.user.mu.Lock()
		s.kv.Release()
		s.user.mu.Unlock()
		s.kv = nil
	}
}

// NewSession starts an episode.
func (u *User) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &userSession{user: u, oracle: o, rng: rng}
}

func (s *userSession) Open(ctx context.Context) (string, error) {
	out, err := s.user.OpenBatch(ctx, []dialog.UserSession{s})
	if err != nil {
		return "", err
	}
	return out[0], nil
}

func (s *userSession) Reply(ctx context.Context, history []dialog.Message) (string, bool, error) {
	texts, ends, err := s.user.ReplyBatch(ctx, []dialog.UserSession{s}, [][]dialog.Message{history})
	if err != nil {
		return "", false, err
	}
	return texts[0], ends[0], nil
}

// OpenBatch writes every conversation's opening. An opening cannot end the
// episode; an unusable one falls back to the task's own opening line.
func (u *User) OpenBatch(ctx context.Context, sessions []dialog.UserSession) ([]string, error) {
	turns, own, err := u.generate(ctx, sessions, make([][]dialog.Message, len(sessions)))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.Text
		if out[i] == "" {
			out[i] = own[i].oracle.Opening
		}
	}
	return out, nil
}

// ReplyBatch answers a whole rollout step.
func (u *User) ReplyBatch(ctx context.Context, sessions []dialog.UserSession, histories [][]dialog.Message) ([]string, []bool, error) {
	turns, _, err := u.generate(ctx, sessions, histories)
	if err != nil {
		return nil, nil, err
	}
	texts := make([]string, len(turns))
	ends := make([]bool, len(turns))
	for i, t := range turns {
		texts[i], ends[i] = t.Text, t.Done
		if t.Text == "" && !t.Done {
			texts[i] = reply.Unclear
		}
	}
	return texts, ends, nil
}

func (u *User) generate(ctx context.Context, sessions []dialog.UserSession, histories [][]dialog.Message) ([]Turn, []*userSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	convs := make([][]tokenizer.Message, len(sessions))
	rngs := make([]*rand.Rand, len(sessions))
	own := make([]*userSession, len(sessions))
	kvs := make([]*lm.KV, len(sessions))
	for i, s := range sessions {
		own[i] = s.(*userSession)
		convs[i] = UserMessages(own[i].oracle, histories[i], u.Oracle, u.Judge)
		rngs[i], kvs[i] = own[i].rng, own[i].kv
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	gc := u.Gen
	if u.Copy != dialog.CopyOff {
		newCopier, err := u.copiers()
		if err != nil {
			return nil, nil, err
		}
		for _, s := range own {
			if s.copier == nil {
				s.copier = newCopier(s.oracle)
			}
		}
		gc.Allow = func(i int, ids []int) []int { return own[i].copier.allow(u.Model.Tok.Decode(ids)) }
	}
	turns, err := u.Model.GenerateKV(convs, string(dialog.RoleUser), gc, rngs, nil, kvs)
	return turns, own, err
}
