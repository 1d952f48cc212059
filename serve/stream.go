package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/calibrl/calibrl/tokenizer"
)

// turnStreamer returns a chatlm.GenConfig.Observe hook that sends the
// simulator's reply in its wire shape ({"message": ..., "end": ...}) as
// the turn is sampled: the opening `{"message":"` with the first settled
// text, then the JSON-escaped text as each token settles it. What it sends
// is always a prefix of reply.User's encoding of the finished turn: text
// counts as settled once a non-space rune follows it, since the finished
// turn is trimmed (and falls back to another text only when it is empty).
func turnStreamer(tok *tokenizer.Tokenizer, emit func(string)) func(int, []int) {
	sent := 0 // bytes of the settled text already sent
	return func(_ int, ids []int) {
		text := settled(tok.ParseReply(ids).Text)
		if len(text) <= sent {
			return
		}
		piece := jsonEscape(text[sent:])
		if sent == 0 {
			piece = `{"message":"` + piece
		}
		sent = len(text)
		emit(piece)
	}
}

// settled is the part of a turn's text so far that the finished turn's
// trimmed text surely begins with: the text less its surrounding space
// and less a rune whose bytes have not all been sampled (it may still
// become a space, and escaped alone it would not be the rune's escape).
func settled(s string) string {
	start := len(s)
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			start = i
			break
		}
	}
	if !utf8.FullRuneInString(s[start:]) {
		s = s[:start]
	}
	return strings.TrimSpace(s)
}

// pieces collects streamed text from the model's goroutine for the one
// that writes the reply, so a slow client never holds up the model.
type pieces struct {
	mu   sync.Mutex
	buf  strings.Builder
	wake chan struct{}
}

func (p *pieces) add(s string) {
	p.mu.Lock()
	p.buf.WriteString(s)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pieces) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.buf.String()
	p.buf.Reset()
	return s
}

// sse writes one completion as OpenAI's server-sent chunks.
type sse struct {
	w       http.ResponseWriter
	id      string
	model   string
	created int64
	started bool
	sent    strings.Builder // the content sent so far
}

func (e *sse) event(v any) {
	if !e.started {
		e.w.Header().Set("Content-Type", "text/event-stream")
		e.w.Header().Set("Cache-Control", "no-cache")
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	b, _ := json.Marshal(v) // maps of strings, numbers and Usage always encode
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (e *sse) chunk(delta map[string]any, finish any) {
	e.event(map[string]any{
		"id": e.id, "object": "chat.completion.chunk", "created": e.created, "model": e.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	})
}

// content sends text; the first chunk names the role, as OpenAI's do.
func (e *sse) content(text string) {
	delta := map[string]any{"content": text}
	if e.sent.Len() == 0 {
		delta["role"] = "assistant"
	}
	e.sent.WriteString(text)
	e.chunk(delta, nil)
}

// streamChat answers a stream request: the completion's text in chunks as
// the model writes it (a model that cannot stream sends it in one), a
// closing chunk with finish_reason, optionally usage, then [DONE]. A
// completion refused before any text was sent is answered as a plain
// error; one that fails later ends the stream with an error event, which
// the OpenAI SDKs raise.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, creq ChatRequest, withUsage bool) {
	id, created := s.completionID()
	out := &sse{w: w, id: id, model: s.opt.ChatName, created: created}
	p := &pieces{wake: make(chan struct{}, 1)}
	creq.Stream = p.add
	done, written := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(written)
		for {
			select {
			case <-p.wake:
				if text := p.take(); text != "" {
					out.content(text)
				}
			case <-done:
				return
			}
		}
	}()
	reply, err := s.opt.Chat.Complete(r.Context(), creq)
	close(done)
	<-written
	if text := p.take(); text != "" && err == nil {
		out.content(text)
	}
	if err != nil && !out.started {
		s.completionFailed(w, err)
		return
	}
	sent := out.sent.String()
	if err == nil && !strings.HasPrefix(reply.Text, sent) {
		err = fmt.Errorf("the streamed text %q is not a prefix of the completion %q", sent, reply.Text)
	}
	if err != nil {
		s.log.Warn("chat completion failed while streaming", "err", err)
		out.event(map[string]apiError{"error": {Message: "completion failed: " + err.Error(), Type: errServer}})
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	usage := reply.settle()
	if rest := reply.Text[len(sent):]; rest != "" || !out.started {
		out.content(rest)
	}
	out.chunk(map[string]any{}, reply.Finish)
	if withUsage {
		out.event(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": s.opt.ChatName,
			"choices": []any{}, "usage": usage,
		})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
