package docedit

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/dialog"
)

// The quote tool (Config.Quote, the task option ":quote"): copying what
// the user wrote is the environment's job, as the calculator's sums are
// in mathchat. An agent writes a call and the environment writes the
// copied text right after it, into the agent's turn; trainers give that
// text no loss (dialog.Tool). Two calls:
//
//	[quote N]     the N-th span the user wrote in the conversation (N
//	              from 1, counted over the user's messages in order, so a
//	              span keeps its number): a double-quoted phrase, written
//	              with its quotes (In sentence 2, change [quote 1]"old
//	              words" to [quote 2]"new words".), or a pasted text,
//	              everything after the first line of a message that ends
//	              in a colon, written as it is
//	[quote text]  the text the user pasted last (Revised document:\n
//	              [quote text]…)
//
// A pasted text is one span however many phrases it quotes, so the
// scripted agents' [quote N] in the human proxy's logs (which never paste)
// is the same call that delivers a paste: a base cloned from them can
// find it.
//
// Everyone reads a turn with its calls taken out (StripQuoteCalls): the
// command above reads In sentence 2, change "old words" to "new words".
// A call the message cannot answer (no such phrase, nothing pasted) gets
// nothing, so a policy gains nothing from calls outside the notation.
//
// So the small policy copies a dictated phrase without spelling it out,
// and a pasted target is something it can exploit: the naive simulator
// pastes the target when asked for it (NaiveConfig.Leakage), and one call
// delivers it whole, as an LLM policy would copy it.
type Quote struct{}

// quoteCallRe matches a call at the end of a turn written so far.
var (
	quoteCallRe    = regexp.MustCompile(`\[quote (\d{1,2}|text)\]$`)
	quoteCallAny   = regexp.MustCompile(`\[quote (?:\d{1,2}|text)\]`)
	quotedPhraseRe = regexp.MustCompile(`"([^"\n]+)"`)
)

// quoteText is the call for the pasted text.
const quoteText = "[quote text]"

// maxQuoteIDs bounds the ids one quote may force: a pasted document of
// the task's sizes (up to 60 words of the generator, a corpus passage)
// fits; the sampler also cuts it to the turn's token limit.
const maxQuoteIDs = 256

// Complete writes nothing: the tool reads the conversation, so only a
// bound one (For) writes.
func (Quote) Complete(string) string { return "" }

// MaxForced is the most ids one quote may force (chatlm reads it).
func (Quote) MaxForced() int { return maxQuoteIDs }

// For binds the tool to the conversation before the agent's turn: it
// quotes the user's messages there.
func (Quote) For(history []dialog.Message) dialog.Tool {
	return newBoundQuote(history)
}

// boundQuote is the quote tool reading one conversation.
type boundQuote struct {
	spans  []string // the user's spans in order: phrases with their quotes, pastes as they are
	pasted string   // what the user pasted last, or ""
}

func newBoundQuote(history []dialog.Message) boundQuote {
	var q boundQuote
	for _, m := range history {
		if m.Role != dialog.RoleUser {
			continue
		}
		head, paste := splitPaste(m.Content)
		q.spans = append(q.spans, quotedPhraseRe.FindAllString(head, -1)...)
		if paste != "" {
			q.spans = append(q.spans, paste)
			q.pasted = paste
		}
	}
	return q
}

// splitPaste cuts msg after its first line that ends in a colon: head
// is up to that line, paste the rest, trimmed ("" when there is none).
func splitPaste(msg string) (head, paste string) {
	lines := splitLines(msg)
	for i, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), ":") {
			return strings.Join(lines[:i+1], "\n"), strings.TrimSpace(strings.Join(lines[i+1:], "\n"))
		}
	}
	return msg, ""
}

// Complete returns the quoted text when text ends in a call, else "".
func (q boundQuote) Complete(text string) string {
	if !strings.HasSuffix(text, "]") {
		return "" // the common case, answered without a regexp
	}
	m := quoteCallRe.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	if m[1] == "text" {
		return q.pasted
	}
	n, _ := strconv.Atoi(m[1])
	if n < 1 || n > len(q.spans) {
		return ""
	}
	return q.spans[n-1]
}

// MaxForced is Quote's.
func (boundQuote) MaxForced() int { return maxQuoteIDs }

// StripQuoteCalls returns a turn as everyone reads it: its quote calls
// taken out, the quoted text in their place. A turn without calls comes
// back as it is.
func StripQuoteCalls(turn string) string {
	if !strings.Contains(turn, "[quote ") {
		return turn
	}
	return quoteCallAny.ReplaceAllString(turn, "")
}

// applyQuotes rewrites a scripted agent's finished turn as if it had used
// the tool while writing it: a document it shows that is the text the
// user pasted last becomes a [quote text] call and the paste, and every
// double-quoted phrase of a turn without documents that is one of the
// user's becomes a call (its first number) and the phrase. A turn that
// quotes nothing comes back unchanged.
func applyQuotes(turn string, history []dialog.Message) string {
	q := newBoundQuote(history)
	if q.pasted != "" {
		if doc, ok := ExtractDocument(turn); ok && doc == Normalize(q.pasted) {
			i := strings.Index(turn, DocMarker)
			j := i + len(DocMarker) + 1 + len(doc) // the marker line, then the shown document
			if i >= 0 && j <= len(turn) && turn[i+len(DocMarker)+1:j] == doc {
				return turn[:i] + DocMarker + "\n" + quoteText + q.pasted + turn[j:]
			}
		}
	}
	if len(q.spans) == 0 || strings.Contains(turn, DocMarker) {
		return turn
	}
	return quotedPhraseRe.ReplaceAllStringFunc(turn, func(p string) string {
		for k, have := range q.spans {
			if p == have {
				return "[quote " + strconv.Itoa(k+1) + "]" + p
			}
		}
		return p
	})
}

// quoteAgent is a scripted agent that uses the quote tool (applyQuotes).
type quoteAgent struct{ a dialog.Agent }

func (q quoteAgent) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return quoteSession{q.a.NewSession(v, rng)}
}

type quoteSession struct{ s dialog.AgentSession }

func (s quoteSession) Act(ctx context.Context, history []dialog.Message) (string, error) {
	out, err := s.s.Act(ctx, history)
	if err != nil {
		return "", err
	}
	return applyQuotes(out, history), nil
}
