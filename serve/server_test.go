package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/calibrl/calibrl/dialog"
)

// guessChat is a chat model that plays the guess agent: it bisects using
// the higher/lower replies in the chat so far.
var guessChat = ChatModelFunc(func(_ context.Context, req ChatRequest) (ChatReply, error) {
	msgs := req.Messages
	lo, hi := 0, 9
	last := -1
	for _, m := range msgs {
		switch {
		case m.Role == dialog.RoleAssistant:
			last, _ = strconv.Atoi(m.Content)
		case m.Content == "higher" && last >= 0:
			lo = last + 1
		case m.Content == "lower" && last >= 0:
			hi = last - 1
		}
	}
	return ChatReply{Text: strconv.Itoa((lo + hi) / 2), Usage: Usage{PromptTokens: len(msgs), CompletionTokens: 1}}, nil
})

func TestEpisodeThroughHTTPWithOpenAIClientAsAgent(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, o *Options) {
		c.Token = "s3cret"
		o.Chat, o.ChatName = guessChat, "guess-sim"
	})
	c := ts.Client()
	oc := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("s3cret"), option.WithMaxRetries(0))

	var created CreateResponse
	idx := 7
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", "s3cret", CreateRequest{Task: "guess", Split: "test", Seed: 1, Index: &idx}, &created); st != http.StatusCreated {
		t.Fatalf("create: got status %d", st)
	}
	if created.ID == "" || created.Observation.Instructions == "" || len(created.Observation.Messages) != 1 {
		t.Fatalf("got %+v, want an id, instructions and the opening", created)
	}
	chat := []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage(created.Observation.System),
		openai.UserMessage(created.Observation.Messages[0].Content),
	}
	var last TurnResponse
	for turn := 1; turn <= 6 && !last.Done; turn++ {
		var msg string
		if turn%2 == 1 {
			comp, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "guess-sim", Messages: chat})
			if err != nil {
				t.Fatal(err)
			}
			if comp.Model != "guess-sim" || comp.Usage.TotalTokens != comp.Usage.PromptTokens+1 {
				t.Errorf("got model %q usage %+v", comp.Model, comp.Usage)
			}
			msg = comp.Choices[0].Message.Content
		} else {
			// Every other turn streams, as trainers that stream do.
			stream := oc.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{Model: "guess-sim", Messages: chat})
			acc := openai.ChatCompletionAccumulator{}
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			msg = acc.Choices[0].Message.Content
		}
		if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+created.ID+"/turns", "s3cret", TurnRequest{Message: msg}, &last); st != 200 {
			t.Fatalf("turn %d: got status %d", turn, st)
		}
		if last.Info.Turn != turn {
			t.Errorf("got turn %d, want %d", last.Info.Turn, turn)
		}
		if !last.Done && last.Reward != 0 {
			t.Errorf("turn %d: got reward %v before the end, want 0", turn, last.Reward)
		}
		chat = append(chat, openai.AssistantMessage(msg), openai.UserMessage(last.Reply))
	}
	if !last.Done || last.Reward != 1 || !last.Info.Success || last.Info.End != dialog.Solved {
		t.Fatalf("got final %+v, want done, reward 1, solved", last)
	}
	var tr Transcript
	if st := call(t, c, "GET", ts.URL+"/v1/episodes/"+created.ID, "s3cret", nil, &tr); st != 200 {
		t.Fatalf("get: got status %d", st)
	}
	if !tr.Done || tr.Reward != 1 || tr.Turns != last.Info.Turn || len(tr.Messages) != 1+2*tr.Turns || tr.Outcome != "7" {
		t.Errorf("got transcript %+v", tr)
	}
	raw := map[string]any{}
	call(t, c, "GET", ts.URL+"/v1/episodes/"+created.ID, "s3cret", nil, &raw)
	if _, ok := raw["oracle"]; ok {
		t.Error("transcript carries the oracle context")
	}
}

// Without --sim the chat endpoint answers 404 model_not_found, which the
// official SDKs do not retry (they retry 408, 409, 429 and 5xx), and says
// which flag turns it on.
func TestChatWithoutSimulatorIsNotRetried(t *testing.T) {
	var hits atomic.Int64
	_, ts := newTestServer(t, nil)
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		r.URL.Scheme, r.URL.Host = "", ""
		resp, err := ts.Client().Post(ts.URL+r.URL.Path, "application/json", r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer counted.Close()
	oc := openai.NewClient(option.WithBaseURL(counted.URL+"/v1/"), option.WithAPIKey(""), option.WithMaxRetries(3))
	_, err := oc.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "x", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errorsAs(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || apiErr.Code != "model_not_found" || !strings.Contains(apiErr.Message, "--sim") {
		t.Fatalf("got %v, want 404 model_not_found naming --sim", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the SDK sent %d requests, want 1 (no retries)", n)
	}
	var list struct {
		Object string           `json:"object"`
		Data   []map[string]any `json:"data"`
	}
	if st := call(t, ts.Client(), "GET", ts.URL+"/v1/models", "", nil, &list); st != 200 || list.Object != "list" || len(list.Data) != 0 {
		t.Errorf("GET /v1/models without --sim: status %d, %+v, want an empty list", st, list)
	}
}

// The sampling fields reach the model as sent; fields it cannot honour
// are refused with 400 naming them, never dropped.
func TestChatSamplingFieldsHonouredOrRefused(t *testing.T) {
	var got ChatRequest
	model := ChatModelFunc(func(_ context.Context, req ChatRequest) (ChatReply, error) {
		got = req
		if len(req.Messages[len(req.Messages)-1].Content) > 20 {
			return ChatReply{}, &InvalidRequest{Param: "messages", Code: "context_length_exceeded", Message: "too long"}
		}
		return ChatReply{Text: "ok", Finish: "length"}, nil
	})
	_, ts := newTestServer(t, func(_ *Config, o *Options) { o.Chat, o.ChatName = model, "sim" })
	oc := openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey(""), option.WithMaxRetries(0))
	ctx := context.Background()
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}
	comp, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "sim", Messages: msgs,
		MaxTokens: openai.Int(7), Temperature: openai.Float(0.5), TopP: openai.Float(0.8), Seed: openai.Int(-3)})
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxTokens != 7 || got.Temperature == nil || *got.Temperature != 0.5 || got.TopP == nil || *got.TopP != 0.8 || got.Seed == nil || *got.Seed != -3 {
		t.Errorf("the model got %+v, want max_tokens 7, temperature 0.5, top_p 0.8, seed -3", got)
	}
	if comp.Choices[0].FinishReason != "length" {
		t.Errorf("finish_reason %q, want the model's length", comp.Choices[0].FinishReason)
	}
	m, err := oc.Models.Get(ctx, "sim")
	if err != nil || m.ID != "sim" {
		t.Errorf("GET /v1/models/sim: %v %+v", err, m)
	}
	page, err := oc.Models.List(ctx)
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != "sim" {
		t.Errorf("GET /v1/models: %v %+v", err, page)
	}
	refused := []struct {
		name, param, code string
		params            openai.ChatCompletionNewParams
	}{
		{"stop", "stop", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, Stop: openai.ChatCompletionNewParamsStopUnion{OfString: openai.String("\n")}}},
		{"temperature", "temperature", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, Temperature: openai.Float(3)}},
		{"top_p", "top_p", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, TopP: openai.Float(0)}},
		{"max_tokens", "max_tokens", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, MaxTokens: openai.Int(0)}},
		{"penalty", "presence_penalty", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, PresencePenalty: openai.Float(1)}},
		{"logprobs", "logprobs", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, Logprobs: openai.Bool(true)}},
		{"n", "n", "", openai.ChatCompletionNewParams{Model: "sim", Messages: msgs, N: openai.Int(2)}},
		{"over-long", "messages", "context_length_exceeded", openai.ChatCompletionNewParams{Model: "sim", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("long ", 10))}}},
	}
	for _, r := range refused {
		_, err := oc.Chat.Completions.New(ctx, r.params)
		var apiErr *openai.Error
		if !errorsAs(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != r.param || apiErr.Code != r.code {
			t.Errorf("%s: got %v, want 400 with param %q code %q", r.name, err, r.param, r.code)
		}
	}
	var e struct{ Error apiError }
	if st := call(t, ts.Client(), "POST", ts.URL+"/v1/chat/completions", "", `{"model":"sim","messages":[{"role":"user","content":"hi"}],"top_k":5}`, &e); st != 400 || e.Error.Param != "top_k" {
		t.Errorf("unknown field top_k: status %d %+v, want 400 naming it", st, e)
	}
	if st := call(t, ts.Client(), "POST", ts.URL+"/v1/chat/completions", "", `{"model":"other","messages":[{"role":"user","content":"hi"}]}`, &e); st != 404 || e.Error.Code != "model_not_found" {
		t.Errorf("wrong model: status %d %+v, want 404 model_not_found", st, e)
	}
}

func errorsAs(err error, target **openai.Error) bool {
	for err != nil {
		if e, ok := err.(*openai.Error); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func TestBadRequests(t *testing.T) {
	const tok = "tok"
	s, ts := newTestServer(t, func(c *Config, o *Options) {
		c.Token, c.MaxBodyBytes = tok, 256
		o.Chat = guessChat
	})
	c := ts.Client()
	var keep CreateResponse
	idx := 3
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", tok, CreateRequest{Task: "guess", Index: &idx}, &keep); st != 201 {
		t.Fatalf("create: got %d", st)
	}
	var first TurnResponse
	call(t, c, "POST", ts.URL+"/v1/episodes/"+keep.ID+"/turns", tok, TurnRequest{Message: "5"}, &first)

	var done CreateResponse
	call(t, c, "POST", ts.URL+"/v1/episodes", tok, CreateRequest{Task: "guess", Index: &idx}, &done)
	call(t, c, "POST", ts.URL+"/v1/episodes/"+done.ID+"/turns", tok, TurnRequest{Message: "3"}, nil)

	big := `{"message": "` + strings.Repeat("x", 300) + `"}`
	tests := []struct {
		name, method, path, token string
		body                      any
		want                      int
		wantType                  string
	}{
		{"unknown task", "POST", "/v1/episodes", tok, `{"task": "nope"}`, 400, errInvalid},
		{"no task", "POST", "/v1/episodes", tok, `{}`, 400, errInvalid},
		{"bad split", "POST", "/v1/episodes", tok, `{"task": "guess", "split": "dev"}`, 400, errInvalid},
		{"user not served", "POST", "/v1/episodes", tok, `{"task": "guess", "user": "learned:/etc"}`, 400, errInvalid},
		{"negative index", "POST", "/v1/episodes", tok, `{"task": "guess", "index": -1}`, 400, errInvalid},
		{"malformed json", "POST", "/v1/episodes", tok, `{"task": `, 400, errInvalid},
		{"unknown field", "POST", "/v1/episodes", tok, `{"task": "guess", "sed": 1}`, 400, errInvalid},
		{"trailing data", "POST", "/v1/episodes", tok, `{"task": "guess"} {}`, 400, errInvalid},
		{"empty body", "POST", "/v1/episodes", tok, "", 400, errInvalid},
		{"oversized body", "POST", "/v1/episodes/" + keep.ID + "/turns", tok, big, 413, errTooLarge},
		{"wrong id", "POST", "/v1/episodes/ep_nope/turns", tok, `{"message": "1"}`, 404, errNotFound},
		{"get wrong id", "GET", "/v1/episodes/ep_nope", tok, nil, 404, errNotFound},
		{"wrong token", "GET", "/v1/episodes/" + keep.ID, "nope", nil, 401, errAuth},
		{"no token", "POST", "/v1/episodes", "", `{"task": "guess"}`, 401, errAuth},
		{"turn after end", "POST", "/v1/episodes/" + done.ID + "/turns", tok, `{"message": "1"}`, 409, errConflict},
		{"wrong method", "PUT", "/v1/episodes", tok, `{}`, 405, errInvalid},
		{"unknown route", "GET", "/v2/things", tok, nil, 404, errNotFound},
		{"chat bad role", "POST", "/v1/chat/completions", tok, `{"model": "calibrl-sim", "messages": [{"role": "tool", "content": "x"}]}`, 400, errInvalid},
		{"chat no messages", "POST", "/v1/chat/completions", tok, `{"model": "calibrl-sim", "messages": []}`, 400, errInvalid},
		{"chat image part", "POST", "/v1/chat/completions", tok, `{"model": "calibrl-sim", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, 400, errInvalid},
		{"seed above 2^53", "POST", "/v1/episodes", tok, `{"task": "guess", "episode_seed": 9007199254740993}`, 400, errInvalid},
		{"fractional seed", "POST", "/v1/episodes", tok, `{"task": "guess", "seed": 1.5}`, 400, errInvalid},
		{"max_turns above the server's", "POST", "/v1/episodes", tok, `{"task": "guess", "max_turns": 99}`, 400, errInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e struct {
				Error apiError `json:"error"`
			}
			if got := call(t, c, tt.method, ts.URL+tt.path, tt.token, tt.body, &e); got != tt.want {
				t.Fatalf("got status %d, want %d (%+v)", got, tt.want, e)
			}
			if e.Error.Type != tt.wantType || e.Error.Message == "" {
				t.Errorf("got error %+v, want type %s with a message", e.Error, tt.wantType)
			}
		})
	}
	// The episode every bad request went around is untouched and playable.
	var tr Transcript
	call(t, c, "GET", ts.URL+"/v1/episodes/"+keep.ID, tok, nil, &tr)
	if tr.Turns != 1 || len(tr.Messages) != 3 || tr.Done {
		t.Fatalf("got %+v, want the kept episode after its one turn", tr)
	}
	if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+keep.ID+"/turns", tok, TurnRequest{Message: "3"}, &first); st != 200 || !first.Done || first.Reward != 1 {
		t.Errorf("got %d %+v, want the kept episode to finish with reward 1", st, first)
	}
	if n := s.store.len(); n != 2 {
		t.Errorf("got %d episodes, want 2 (bad requests create none)", n)
	}
	// healthz needs no token.
	if st := call(t, c, "GET", ts.URL+"/healthz", "", nil, nil); st != 200 {
		t.Errorf("healthz: got %d", st)
	}
}

func TestConcurrentClients(t *testing.T) {
	_, ts := newTestServer(t, nil)
	c := ts.Client()
	const clients = 16
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := i
			var cr CreateResponse
			if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &idx, Seed: Seed(i)}, &cr); st != 201 {
				errs <- fmt.Sprintf("client %d: create %d", i, st)
				return
			}
			turns := bisect(t, c, ts.URL, "", cr.ID)
			if last := turns[len(turns)-1]; last.Reward != 1 {
				errs <- fmt.Sprintf("client %d: reward %v", i, last.Reward)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// Many turns racing on one episode are serialised: none lost, none
	// counted twice, each reply numbered once.
	idx := 9
	var cr CreateResponse
	call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &idx}, &cr)
	const racing = 8 // under the turn limit of 10; the guess "0" is never right
	seen := make(chan int, racing)
	for range racing {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr TurnResponse
			if st := call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "0"}, &tr); st == 200 {
				seen <- tr.Info.Turn
			}
		}()
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for n := range seen {
		if got[n] {
			t.Errorf("turn %d answered twice", n)
		}
		got[n] = true
	}
	var tr Transcript
	call(t, c, "GET", ts.URL+"/v1/episodes/"+cr.ID, "", nil, &tr)
	if len(got) != racing || tr.Turns != racing || len(tr.Messages) != 1+2*racing {
		t.Errorf("got %d replies, %d turns, %d messages; want %d, %d, %d", len(got), tr.Turns, len(tr.Messages), racing, racing, 1+2*racing)
	}
}

func TestTurnLimitEndsEpisode(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, _ *Options) { c.MaxTurns = 2 })
	c := ts.Client()
	idx := 9
	var cr CreateResponse
	call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &idx}, &cr)
	var tr TurnResponse
	call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "0"}, &tr)
	call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "1"}, &tr)
	if !tr.Done || tr.Info.End != dialog.MaxTurns || tr.Reward != 0 {
		t.Errorf("got %+v, want done at the turn limit with reward 0", tr)
	}
}

func TestExpiryAndCap(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	_, ts := newTestServer(t, func(c *Config, o *Options) {
		c.EpisodeTTL, c.MaxEpisodes = time.Minute, 2
		o.Now = clock
	})
	c := ts.Client()
	create := func() (string, int) {
		var cr CreateResponse
		idx := 4
		st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &idx}, &cr)
		return cr.ID, st
	}
	a, _ := create()
	b, _ := create()
	if _, st := create(); st != http.StatusTooManyRequests {
		t.Fatalf("third episode at cap 2: got %d, want 429", st)
	}
	// A finished episode makes room.
	call(t, c, "POST", ts.URL+"/v1/episodes/"+a+"/turns", "", TurnRequest{Message: "4"}, nil)
	if _, st := create(); st != http.StatusCreated {
		t.Fatalf("after finishing one: got %d, want 201", st)
	}
	if st := call(t, c, "GET", ts.URL+"/v1/episodes/"+a, "", nil, nil); st != 404 {
		t.Errorf("evicted finished episode: got %d, want 404", st)
	}
	// Idle episodes expire.
	advance(2 * time.Minute)
	if st := call(t, c, "GET", ts.URL+"/v1/episodes/"+b, "", nil, nil); st != 404 {
		t.Errorf("expired episode: got %d, want 404", st)
	}
	if _, st := create(); st != http.StatusCreated {
		t.Errorf("after expiry: got %d, want 201", st)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:0", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"10.0.0.5:8080", "", false},
		{"0.0.0.0:8080", "t", true},
		{"nonsense", "", false},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		c.Addr, c.Token = tt.addr, tt.token
		if err := c.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(addr %q, token %q) = %v, want ok %v", tt.addr, tt.token, err, tt.ok)
		}
	}
}

// slowUser blocks each reply until release is closed.
type slowUser struct{ started, release chan struct{} }

func (u slowUser) NewSession(o *dialog.Oracle, _ *rand.Rand) dialog.UserSession {
	return slowSession{u, o}
}

type slowSession struct {
	u slowUser
	o *dialog.Oracle
}

func (s slowSession) Open(context.Context) (string, error) { return "hi", nil }
func (s slowSession) Reply(context.Context, []dialog.Message) (string, bool, error) {
	s.u.started <- struct{}{}
	<-s.u.release
	return "ok", false, nil
}

func TestGracefulShutdownFinishesTurn(t *testing.T) {
	u := slowUser{started: make(chan struct{}, 1), release: make(chan struct{})}
	cfg := DefaultConfig()
	s, err := New(cfg, Options{Task: taskByName(guessTask{user: u})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	c := &http.Client{Timeout: 10 * time.Second}
	var cr CreateResponse
	if st := call(t, c, "POST", base+"/v1/episodes", "", CreateRequest{Task: "guess"}, &cr); st != 201 {
		t.Fatalf("create: got %d", st)
	}
	turn := make(chan int, 1)
	go func() {
		var tr TurnResponse
		turn <- call(t, c, "POST", base+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "1"}, &tr)
	}()
	<-u.started
	stop() // SIGINT arrives mid-turn
	time.Sleep(20 * time.Millisecond)
	close(u.release)
	if st := <-turn; st != 200 {
		t.Errorf("in-flight turn: got %d, want 200", st)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: got %v, want a clean stop", err)
	}
	if _, err := c.Get(base + "/healthz"); err == nil {
		t.Error("server still accepts after shutdown")
	}
}

var _ = json.Marshal
