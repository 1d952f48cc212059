// Package chatlm makes an engine model speak in conversations: it renders
// a dialog for the side that speaks (the agent sees its view, the user
// simulator sees the oracle context), generates whole turns for many
// conversations in one batch, and turns logged episodes into training
// sequences with the loss on one side's tokens.
package chatlm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
)

// Model is an engine model with the tokenizer it was trained with.
type Model struct {
	LM  *lm.Model
	Tok *tokenizer.Tokenizer
}

// New pairs a model with a tokenizer, checking that every token id fits.
func New(m *lm.Model, tok *tokenizer.Tokenizer) (*Model, error) {
	if tok.VocabSize() > m.Config.VocabSize {
		return nil, fmt.Errorf("chatlm: tokenizer has %d ids, model vocab_size is %d", tok.VocabSize(), m.Config.VocabSize)
	}
	for _, s := range []string{tokenizer.System, tokenizer.User, tokenizer.Assistant, tokenizer.End, tokenizer.Done, tokenizer.Pad} {
		if _, ok := tok.SpecialID(s); !ok {
			return nil, fmt.Errorf("chatlm: tokenizer lacks the special token %s", s)
		}
	}
	return &Model{LM: m, Tok: tok}, nil
}

// Load reads a checkpoint folder that holds a tokenizer.json. The returned
// optimizer is nil when the folder has no optimizer state.
func Load(dir string) (*Model, *lm.AdamW, error) {
	// A calibrl.json beside the weights must read whole, for every loader:
	// a torn one is an error, not a checkpoint played without the role
	// and conditioning it names (the players read it: spec).
	if _, _, err := checkpoint.ReadOptional(dir); err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", dir, err)
	}
	ck, err := lm.LoadCheckpoint(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(ck.Tokenizer) == 0 {
		return nil, nil, fmt.Errorf("load %s: no %s: a chat model needs its tokenizer", dir, lm.TokenizerFile)
	}
	tok, err := tokenizer.Parse(ck.Tokenizer)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %s: %w", dir, lm.TokenizerFile, err)
	}
	m, err := New(ck.Model, tok)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", dir, err)
	}
	return m, ck.Optimizer, nil
}

// Save writes the model, its tokenizer and (when not nil) the optimizer
// state to dir.
func (m *Model) Save(dir string, opt *lm.AdamW) error {
	return lm.SaveCheckpoint(dir, lm.Checkpoint{Model: m.LM, Optimizer: opt, Tokenizer: m.Tok.Bytes()})
}

// Clone returns an independent copy of the weights (for a frozen
// reference policy) sharing the tokenizer.
func (m *Model) Clone() (*Model, error) {
	c, err := lm.New(m.LM.Config, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, err
	}
	copy(c.Params.Data, m.LM.Params.Data)
	c.Workers = m.LM.Workers
	return &Model{LM: c, Tok: m.Tok}, nil
}

// AgentMessages is the conversation as the agent sees it (dialog.AgentChat:
// its view as the system turn, then the dialog) in the tokenizer's
// messages.
func AgentMessages(v *dialog.View, history []dialog.Message) []tokenizer.Message {
	chat := dialog.AgentChat(v, history)
	msgs := make([]tokenizer.Message, len(chat))
	for i, m := range chat {
		msgs[i] = tokenizer.Message{Role: string(m.Role), Content: m.Content}
	}
	return msgs
}

// UserMessages is the conversation as the user simulator sees it: the
// oracle context as the system turn (or, blind, only what the user said
// first is known — the no-oracle-context ablation), then the dialog. With
// the oracle context and a judge, every agent turn that delivers an
// outcome is followed by a system turn with the judge's verdict on it
// (and any note of the task's joined to the judge: UserNotesOf).
func UserMessages(o *dialog.Oracle, history []dialog.Message, oracle bool, judge Judge) []tokenizer.Message {
	sys := "You are the user."
	if oracle {
		sys = OracleContext(o)
	}
	msgs := withSystem(sys, history)
	if !oracle || judge == nil {
		return msgs
	}
	judged := make([]tokenizer.Message, 0, len(msgs)+2)
	judged = append(judged, msgs[0])
	for i := range history {
		judged = append(judged, msgs[i+1])
		if v := judge(o, history[:i+1]); v != "" {
			judged = append(judged, tokenizer.Message{Role: string(dialog.RoleSystem), Content: v})
		}
	}
	return judged
}

// A Judge gives its verdict on the last message of msgs, an agent turn in
// its conversation ("" when it is not one or delivers no outcome); more
// generally it writes the note the simulator reads after that turn, and a
// task's own notes (UserNotesOf) join the verdict there (JoinJudges). It
// is the part of the oracle context a person computes: they hold the
// answer and compare. A language model simulator does the comparison
// itself; a 1M-parameter one trained on a few thousand logs does not
// learn it — it learns the shortcut that careful-looking answers are
// accepted, and so accepts a careful-looking wrong answer — so the
// embedded simulator is shown the task's own check (fidelity's verdicts
// measure this).
type Judge func(o *dialog.Oracle, msgs []dialog.Message) string

// The verdicts a TaskJudge writes.
const (
	CheckRight = "Check: right."
	CheckWrong = "Check: wrong."
)

// TaskJudge judges a turn by the task's verdict on it (dialog.Verdict): in
// its conversation, so that a docedit turn of edit commands is judged by
// the document the environment made of it, as a full revision to the same
// document would be.
func TaskJudge(s dialog.Scorer) Judge {
	return func(o *dialog.Oracle, msgs []dialog.Message) string {
		delivered, right := dialog.Verdict(s, o, msgs)
		switch {
		case !delivered:
			return ""
		case right:
			return CheckRight
		}
		return CheckWrong
	}
}

// UserNotesOf returns the notes task t shows the simulator after agent
// turns beyond the check (mathchat's user ledger: the withheld statement a
// turn asked about, with its true number), or nil when it shows none: a
// task offers them with a method UserNotes returning a non-nil function,
// as it offers an environment (dialog.EnvironmentOf). They are a Judge,
// not a second path into the simulator's view: like the verdict they are
// the part of the oracle context a person reads off at a glance, and
// JoinJudges puts them in the one note after the turn, so the fit (sft),
// the players (User, serve) and every view of the conversation
// (UserMessages) carry them without knowing of them.
func UserNotesOf(t any) Judge {
	if p, ok := t.(interface {
		UserNotes() func(o *dialog.Oracle, msgs []dialog.Message) string
	}); ok {
		if f := p.UserNotes(); f != nil {
			return f
		}
	}
	return nil
}

// JoinJudges is one Judge whose note on a turn is a's and b's together
// (a's first, a space between; "" when both are). A nil one adds nothing:
// JoinJudges(a, nil) is a itself, so a view without notes stays the same
// bytes.
func JoinJudges(a, b Judge) Judge {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(o *dialog.Oracle, msgs []dialog.Message) string {
		x, y := a(o, msgs), b(o, msgs)
		if x == "" || y == "" {
			return x + y
		}
		return x + " " + y
	}
}

func withSystem(sys string, history []dialog.Message) []tokenizer.Message {
	msgs := make([]tokenizer.Message, 0, len(history)+1)
	msgs = append(msgs, tokenizer.Message{Role: string(dialog.RoleSystem), Content: sys})
	for _, h := range history {
		msgs = append(msgs, tokenizer.Message{Role: string(h.Role), Content: h.Content})
	}
	return msgs
}

// OracleContext serialises what only the user knows, compactly: what the
// user opens with (the initial instruction), the hidden facts or the
// concrete edits, the ground truth, and the persona.
func OracleContext(o *dialog.Oracle) string {
	var b strings.Builder
	switch {
	case o.Opening != "":
		fmt.Fprintf(&b, "Opening: %s\n", o.Opening)
	case o.Instruction != "":
		fmt.Fprintf(&b, "Goal: %s\n", o.Instruction)
	}
	for _, f := range o.Facts {
		if f.Hidden {
			fmt.Fprintf(&b, "Hidden: %s\n", f.Text)
		}
	}
	for _, e := range o.Edits {
		fmt.Fprintf(&b, "Edit: %s\n", e.Detail)
	}
	if o.Truth != "" {
		label := "Answer"
		if o.Draft != "" {
			label = "Target"
		}
		fmt.Fprintf(&b, "%s: %s\n", label, o.Truth)
	}
	p := o.Persona
	if p == (dialog.Persona{}) {
		// A logged conversation without a persona: say nothing rather
		// than "patience 0".
		return strings.TrimSuffix(b.String(), "\n")
	}
	fmt.Fprintf(&b, "Persona: patience %d, clarity %.1f, typos %.2f", p.Patience, p.Clarity, p.TypoRate)
	if p.Threshold > 0 {
		fmt.Fprintf(&b, ", threshold %.0f", p.Threshold)
	}
	return b.String()
}

// GenConfig controls generation of one turn.
type GenConfig struct {
	// MaxNewTokens bounds a turn. Default 64.
	MaxNewTokens int
	// Temperature of sampling; 0 is greedy. Default 1 (on-policy).
	Temperature float64
	// TopP nucleus; 1 keeps all. Default 1.
	TopP float64
	// Allow, when set, restricts conversation i's next token, after the
	// turn's ids so far (the sampler's: copy them to keep them), to the
	// ids it returns, nil for any (lm.SampleConfig.Allow): benchmarks give
	// turns a fixed shape with it; a simulator copies the numbers it
	// holds (User.Copy). Default nil.
	Allow func(i int, ids []int) []int `json:"-"`
	// Observe, when set, is called after every sampled token that does not
	// end conversation i's turn, with the turn's ids so far (the ids are
	// the sampler's: copy them to keep them). A server streams the turn as
	// it is sampled with it; the turn is the same with or without it.
	// Default nil.
	Observe func(i int, ids []int) `json:"-"`
}

// DefaultGenConfig returns the documented defaults.
func DefaultGenConfig() GenConfig { return GenConfig{MaxNewTokens: 64, Temperature: 1, TopP: 1} }

// Turn is one generated turn.
type Turn struct {
	Text string
	// Done: the speaker ended the episode (<|done|>).
	Done bool
	// Clean: the turn closed with <|end|> or <|done|>; false when a length
	// limit cut it or the model emitted another special token.
	Clean bool
	// IDs are the sampled ids, the closing token included; LogProbs their
	// log-probabilities under the model.
	IDs      []int
	LogProbs []float32
	// Forced marks the ids a tool wrote (nil: none); they carry no loss.
	Forced []bool
}

// Generate writes the next turn of role ("user" or "assistant") for each
// conversation, each drawing only from its own rngs[i]. Conversations too
// long for the context lose their oldest turns after the system turn.
// tool, when not nil, writes its part of each turn as the turn is sampled
// (dialog.Tool): its text, encoded, is forced into the sequence.
func (m *Model) Generate(convs [][]tokenizer.Message, role string, gc GenConfig, rngs []*rand.Rand, tool dialog.Tool) ([]Turn, error) {
	return m.GenerateKV(convs, role, gc, rngs, tool, nil)
}

// GenerateKV is Generate with each conversation's key/value cache kept in
// kvs[i] (nil: none), as lm.Model.SampleKV keeps it: a turn reads only the
// part of its prompt the cache does not hold yet, and the turns are
// exactly Generate's.
func (m *Model) GenerateKV(convs [][]tokenizer.Message, role string, gc GenConfig, rngs []*rand.Rand, tool dialog.Tool, kvs []*lm.KV) ([]Turn, error) {
	if len(convs) != len(rngs) {
		return nil, fmt.Errorf("generate: %d random sources for %d conversations", len(rngs), len(convs))
	}
	if gc.MaxNewTokens <= 0 {
		return nil, errors.New("generate: MaxNewTokens must be positive")
	}
	prompts := make([][]int, len(convs))
	for i, c := range convs {
		p, err := m.Prompt(c, role, gc.MaxNewTokens)
		if err != nil {
			return nil, err
		}
		prompts[i] = p
	}
	if len(prompts) == 0 {
		return nil, nil
	}
	comps, err := m.LM.SampleKV(prompts, kvs, lm.SampleConfig{
		Temperature: gc.Temperature, TopP: gc.TopP, MaxNewTokens: gc.MaxNewTokens, Stop: m.Tok.StopIDs(),
		Force: observe(m.forcer(tool, convs), gc.Observe), MaxForced: maxForced(tool, gc.MaxNewTokens), Allow: gc.Allow,
	}, rngs)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	out := make([]Turn, len(comps))
	for i, c := range comps {
		r := m.Tok.ParseReply(c.Tokens)
		out[i] = Turn{
			Text:     strings.TrimSpace(r.Text),
			Done:     r.Done(),
			Clean:    r.Stop == tokenizer.End || r.Stop == tokenizer.Done,
			IDs:      c.Tokens,
			LogProbs: c.LogProbs,
			Forced:   c.Forced,
		}
	}
	return out, nil
}

// observe calls see with every token's turn so far before force writes
// its part: the sampler's one per-token hook serves both.
func observe(force func(int, []int) []int, see func(int, []int)) func(int, []int) []int {
	if see == nil {
		return force
	}
	return func(i int, ids []int) []int {
		see(i, ids)
		if force == nil {
			return nil
		}
		return force(i, ids)
	}
}

// forcer adapts a tool to the sampler: after every sampled token the tool
// (bound to conversation s when it reads the conversation:
// dialog.ToolFor) reads the turn so far as text (a decode of at most
// MaxNewTokens ids), and what it writes is encoded as the ids to force.
func (m *Model) forcer(tool dialog.Tool, convs [][]tokenizer.Message) func(int, []int) []int {
	if tool == nil {
		return nil
	}
	tools := make([]dialog.Tool, len(convs))
	for s, c := range convs {
		tools[s] = bindTool(tool, c)
	}
	return func(s int, ids []int) []int {
		if ins := tools[s].Complete(m.Tok.Decode(ids)); ins != "" {
			return m.Tok.Encode(ins)
		}
		return nil
	}
}

// bindTool binds tool to the conversation before a turn (dialog.ToolFor).
func bindTool(tool dialog.Tool, conv []tokenizer.Message) dialog.Tool {
	if _, ok := tool.(dialog.ConversationTool); !ok {
		return tool
	}
	history := make([]dialog.Message, len(conv))
	for i, m := range conv {
		history[i] = dialog.Message{Role: dialog.Role(m.Role), Content: m.Content}
	}
	return dialog.ToolFor(tool, history)
}

// maxForced is how many ids one insertion of tool may force: the
// sampler's default (a calculator's result), or, for a tool that writes
// longer text (docedit's quote of a pasted document), its own bound in
// ids, at most maxNew.
func maxForced(tool dialog.Tool, maxNew int) int {
	if t, ok := tool.(interface{ MaxForced() int }); ok {
		return min(t.MaxForced(), maxNew)
	}
	return 0
}

// MinPrompt is the fewest prompt tokens Prompt leaves room for: a context
// that holds less beside the new tokens cannot hold a turn's framing.
const MinPrompt = 8

// Prompt renders the prompt for the next turn of role, dropping the
// oldest turns until it leaves room for maxNew tokens. The system turn and
// the first turn after it (the user's opening: the problem or request) are
// kept while anything else can go; as the last resort the prompt keeps the
// head of what is left.
func (m *Model) Prompt(conv []tokenizer.Message, role string, maxNew int) ([]int, error) {
	limit := m.LM.Config.Context - maxNew
	if limit < MinPrompt {
		return nil, fmt.Errorf("generate: context %d leaves no room for a prompt with %d new tokens", m.LM.Config.Context, maxNew)
	}
	keep := min(2, len(conv)) // system turn and opening
	for drop := 0; ; drop++ {
		msgs := conv
		if drop > 0 {
			rest := len(conv) - keep
			if drop > rest {
				drop = rest
			}
			msgs = append(append([]tokenizer.Message{}, conv[:keep]...), conv[keep+drop:]...)
		}
		ids, _, err := m.Tok.RenderPrompt(msgs, role)
		if err != nil {
			return nil, fmt.Errorf("generate: %w", err)
		}
		if len(ids) <= limit {
			return ids, nil
		}
		if len(msgs) <= keep {
			// The kept turns alone are too long: keep their head and the
			// opening of the turn to write.
			head := append([]int{}, ids[:limit-1]...)
			return append(head, ids[len(ids)-1]), nil
		}
	}
}

// CountTokens is the length of s in the model's tokens, the counter a run
// with this model as the agent records in its episodes.
func (m *Model) CountTokens(s string) int { return len(m.Tok.Encode(s)) }
