package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/preset"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

// tinySim is testSim at the tiny preset's simulator size (a 256-token
// context) and with the sampling a learned: user loads with
// (spec.DefaultGen: up to 96 new tokens): the opening's own prompt does not
// fit beside a whole turn, so every turn is played by dropping context.
func tinySim(t *testing.T) (task.Task, *chatlm.User, []dialog.Episode) {
	t.Helper()
	tk, u, eps := testSim(t)
	b, err := preset.Get("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.NewModel(u.Model.Tok, b.Sim, 3)
	if err != nil {
		t.Fatal(err)
	}
	return tk, &chatlm.User{Model: m, Oracle: true, Judge: u.Judge, Gen: spec.DefaultGen()}, eps
}

// The served simulator plays every turn the in-process learned user plays
// on the same checkpoint, the conversations longer than its context
// included (it drops the same turns: chatlm.Model.Prompt), and a request
// without max_tokens takes the simulator's own turn bound.
func TestServedSimulatorDropsContextAsTheInProcessOne(t *testing.T) {
	tk, u, eps := tinySim(t)
	sim := NewSimulator(u, tk, 1)
	ctxLen := u.Model.LM.Config.Context
	cut := 0
	for i := range eps[:9] {
		ep := &eps[i]
		for j := 0; j <= len(ep.Messages); j++ {
			if j > 0 && ep.Messages[j-1].Role != dialog.RoleAssistant {
				continue
			}
			history := ep.Messages[:j]
			conv := chatlm.UserMessages(&ep.Oracle, history, true, u.Judge)
			full, _, err := u.Model.Tok.RenderPrompt(conv, string(dialog.RoleUser))
			if err != nil {
				t.Fatal(err)
			}
			if len(full)+u.Gen.MaxNewTokens > ctxLen {
				cut++
			}
			seed := int64(100*i + j)
			served, err := sim.Complete(context.Background(), ChatRequest{Messages: remote.RolePlayChat(&ep.Oracle, history, false, false), Seed: &seed})
			if err != nil {
				t.Fatalf("episode %s, %d messages (%d prompt tokens, context %d): %v", ep.ID, j, len(full), ctxLen, err)
			}
			var r reply.User
			if err := json.Unmarshal([]byte(served.Text), &r); err != nil {
				t.Fatalf("reply %q is not the JSON shape: %v", served.Text, err)
			}
			sess := u.NewSession(&ep.Oracle, rollout.UserRand(uint64(seed)))
			var text string
			var end bool
			if j == 0 {
				text, err = sess.Open(context.Background())
			} else {
				text, end, err = sess.Reply(context.Background(), history)
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Message != jsonText(text) || r.End != end {
				t.Fatalf("episode %s, %d messages: served %+v, in-process %q end %v", ep.ID, j, r, text, end)
			}
			if served.Usage.PromptTokens+u.Gen.MaxNewTokens > ctxLen {
				t.Fatalf("usage counts %d prompt tokens: more than the context leaves (%d)", served.Usage.PromptTokens, ctxLen-u.Gen.MaxNewTokens)
			}
		}
	}
	if cut == 0 {
		t.Fatal("no conversation outgrew the context: the test checks nothing")
	}
	t.Logf("%d turns played with context dropped", cut)
}

// A stream sends the completion in more than one chunk, as it is sampled,
// and the chunks joined are the completion a plain request gets.
func TestStreamingSendsTheTurnAsItIsSampled(t *testing.T) {
	tk, u, eps := testSim(t)
	s, err := New(DefaultConfig(), Options{Task: task.Lookup, Chat: NewSimulator(u, tk, 1), ChatName: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	most := 0
	for i := range eps[:6] {
		msgs := remote.RolePlayChat(&eps[i].Oracle, eps[i].Messages[:2], false, false)
		body := map[string]any{"model": "sim", "messages": msgs, "seed": 7 + i}
		var plain struct {
			Choices []struct {
				Message struct{ Content string }
			}
		}
		if st := call(t, ts.Client(), "POST", ts.URL+"/v1/chat/completions", "", body, &plain); st != 200 {
			t.Fatalf("plain: got %d", st)
		}
		body["stream"] = true
		chunks, text := streamed(t, ts.URL, body)
		if want := plain.Choices[0].Message.Content; text != want {
			t.Fatalf("streamed %q, plain %q", text, want)
		}
		most = max(most, chunks)
	}
	if most < 2 {
		t.Fatalf("every completion came in %d content chunk(s), want the turn as it is sampled", most)
	}
}

// streamed posts a stream request and returns its content chunks' count
// and text.
func streamed(t *testing.T, url string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: got %d", resp.StatusCode)
	}
	n := 0
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string }
			}
			Error *apiError
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if c.Error != nil {
			t.Fatalf("stream error: %+v", c.Error)
		}
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			n++
			text.WriteString(c.Choices[0].Delta.Content)
		}
	}
	return n, text.String()
}

// What the streamer sends is a prefix of the finished turn's wire text,
// whatever the tokens: partial runes, spaces at either end, special tokens
// in the middle.
func TestTurnStreamerSendsAPrefixOfTheReply(t *testing.T) {
	_, u, _ := testSim(t)
	tok := u.Model.Tok
	rng := rand.New(rand.NewPCG(1, 2))
	var specials []int
	for id := range tok.VocabSize() {
		if tok.IsSpecial(id) {
			specials = append(specials, id)
		}
	}
	space := tok.Encode(" ")
	for trial := range 3000 {
		var ids []int
		var sent strings.Builder
		hook := turnStreamer(tok, func(p string) { sent.WriteString(p) })
		for n := 1 + rng.IntN(30); len(ids) < n; {
			switch r := rng.IntN(10); {
			case r == 0 && len(specials) > 0:
				ids = append(ids, specials[rng.IntN(len(specials))])
			case r < 3:
				ids = append(ids, space...)
			default:
				ids = append(ids, rng.IntN(tok.VocabSize()))
			}
			hook(0, ids)
		}
		msg := strings.TrimSpace(tok.ParseReply(ids).Text)
		if msg == "" {
			if sent.Len() > 0 {
				t.Fatalf("trial %d: sent %q for an empty turn", trial, sent.String())
			}
			continue
		}
		if final := (reply.User{Message: msg}).Encode(); !strings.HasPrefix(final, sent.String()) {
			t.Fatalf("trial %d: sent %q, not a prefix of %q", trial, sent.String(), final)
		}
	}
}
