package serve

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// wsClient is OpenEnv's EnvClient as its source does it
// (src/openenv/core/env_client.py at 685de41): connect to BASE/ws, send
// {"type", "data"} text messages, read one reply per message, raise on
// {"type": "error"}, and read StepResult from data's observation, reward
// and done.
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

func dialOpenEnv(t *testing.T, base, token string) (*wsClient, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opt := &websocket.DialOptions{}
	if token != "" {
		opt.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", opt)
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(100 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: t, c: c}, nil
}

// send sends one message and returns the reply's type and data.
func (w *wsClient) send(typ string, data any) (string, json.RawMessage) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msg := map[string]any{"type": typ}
	if data != nil {
		msg["data"] = data
	}
	b, _ := json.Marshal(msg)
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
	_, raw, err := w.c.Read(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	var r struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		w.t.Fatalf("reply %s: %v", raw, err)
	}
	return r.Type, r.Data
}

func (w *wsClient) result(typ string, data any) OpenEnvResult {
	w.t.Helper()
	got, raw := w.send(typ, data)
	if got != "observation" {
		w.t.Fatalf("%s: got %s %s, want an observation", typ, got, raw)
	}
	var res OpenEnvResult
	if err := json.Unmarshal(raw, &res); err != nil {
		w.t.Fatal(err)
	}
	return res
}

// Episodes of rollout.Run (what `calibrl eval` plays), replayed through
// OpenEnv's WebSocket session and its HTTP routes with the same agent
// turns: the user says the same, the environment notes the same, and the
// reward on the last step is the episode's.
func TestOpenEnvPlaysTheEpisodesEvalPlays(t *testing.T) {
	for _, name := range []string{"mathchat:easy", "docedit:easy"} {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		agent, _ := tk.Agent("careful")
		user, _ := tk.User("human")
		const seed = 17
		eps, err := rollout.Run(context.Background(), tk, agent, user, rollout.Config{Split: "test", Instances: 4, Seed: seed, MaxTurns: 6})
		if err != nil {
			t.Fatal(err)
		}
		_, ts := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
		ws, err := dialOpenEnv(t, ts.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps {
			reset := map[string]any{"task": name, "split": "test", "seed": seed, "index": ep.Index, "user": "human", "max_turns": 6}
			play := func(via string, reset func() OpenEnvResult, step func(id, msg string) OpenEnvResult) {
				res := reset()
				if res.Reward != nil || res.Done {
					t.Fatalf("%s %s: reset gave reward %v done %v", via, ep.ID, res.Reward, res.Done)
				}
				if uint64(res.Observation.EpisodeSeed) != ep.Seed {
					t.Fatalf("%s %s: episode seed %d, eval's %d", via, ep.ID, res.Observation.EpisodeSeed, ep.Seed)
				}
				id, i := res.Observation.EpisodeID, 0
				var seen []dialog.Message
				for ; i < len(ep.Messages) && ep.Messages[i].Role != dialog.RoleAssistant; i++ {
					seen = append(seen, ep.Messages[i])
				}
				if want := append([]dialog.Message{{Role: dialog.RoleSystem, Content: ep.View.System()}}, seen...); !sameMessages(res.Observation.Messages, want) {
					t.Fatalf("%s %s: reset messages %+v, want %+v", via, ep.ID, res.Observation.Messages, want)
				}
				for i < len(ep.Messages) {
					msg := ep.Messages[i].Content
					var want []dialog.Message
					for i++; i < len(ep.Messages) && ep.Messages[i].Role != dialog.RoleAssistant; i++ {
						want = append(want, ep.Messages[i])
					}
					res = step(id, msg)
					if !sameMessages(res.Observation.Messages, want) {
						t.Fatalf("%s %s: step messages %+v, want %+v", via, ep.ID, res.Observation.Messages, want)
					}
					if res.Done != (i == len(ep.Messages)) {
						t.Fatalf("%s %s: done %v with %d messages left", via, ep.ID, res.Done, len(ep.Messages)-i)
					}
				}
				if res.Reward == nil || *res.Reward != ep.Reward || res.Observation.Success != ep.Success {
					t.Fatalf("%s %s: reward %v success %v, eval's %v %v", via, ep.ID, res.Reward, res.Observation.Success, ep.Reward, ep.Success)
				}
			}
			play("ws", func() OpenEnvResult { return ws.result("reset", reset) },
				func(_, msg string) OpenEnvResult { return ws.result("step", map[string]any{"message": msg}) })
			typ, raw := ws.send("state", nil)
			var st OpenEnvState
			if err := json.Unmarshal(raw, &st); typ != "state" || err != nil || st.StepCount != ep.Turns || !st.Done || st.Reward != ep.Reward {
				t.Fatalf("state: %s %s (%v)", typ, raw, err)
			}
			play("http", func() OpenEnvResult {
				var res OpenEnvResult
				if code := call(t, ts.Client(), "POST", ts.URL+"/reset", "", reset, &res); code != 200 {
					t.Fatalf("POST /reset: %d", code)
				}
				return res
			}, func(id, msg string) OpenEnvResult {
				var res OpenEnvResult
				if code := call(t, ts.Client(), "POST", ts.URL+"/step", "", map[string]any{"episode_id": id, "action": map[string]any{"message": msg}}, &res); code != 200 {
					t.Fatalf("POST /step: %d", code)
				}
				return res
			})
		}
	}
}

func sameMessages(got, want []dialog.Message) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Role != want[i].Role || got[i].Content != want[i].Content {
			return false
		}
	}
	return true
}

// Sessions are capped by OpenEnvSessions (a session over it is told
// CAPACITY_REACHED, as OpenEnv's server tells it), a closed session frees
// its place, and malformed messages get OpenEnv's error codes without
// ending the session.
func TestOpenEnvSessionsAndErrors(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, _ *Options) { c.OpenEnvSessions = 2; c.OpenEnvTask = "guess" })
	a, _ := dialOpenEnv(t, ts.URL, "")
	b, _ := dialOpenEnv(t, ts.URL, "")
	a.result("reset", nil)
	b.result("reset", map[string]any{"seed": 3})
	c, err := dialOpenEnv(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, raw, err := c.c.Read(ctx)
	if err != nil || !strings.Contains(string(raw), `"CAPACITY_REACHED"`) {
		t.Fatalf("third session of 2: got %s, %v; want CAPACITY_REACHED", raw, err)
	}
	if err := b.c.Write(ctx, websocket.MessageText, []byte(`{"type": "close"}`)); err != nil {
		t.Fatal(err)
	}
	var d *wsClient
	for range 100 { // the closed session's place frees as its handler returns
		if d, err = dialOpenEnv(t, ts.URL, ""); err != nil {
			t.Fatal(err)
		}
		if typ, _ := d.send("state", nil); typ == "state" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, tc := range []struct{ typ, data, code string }{
		{"step", `{"text": "hi"}`, "VALIDATION_ERROR"},
		{"fly", `{}`, "UNKNOWN_TYPE"},
		{"reset", `{"task": "nope"}`, "VALIDATION_ERROR"},
	} {
		typ, raw := a.send(tc.typ, json.RawMessage(tc.data))
		if typ != "error" || !strings.Contains(string(raw), tc.code) {
			t.Errorf("%s %s: got %s %s, want %s", tc.typ, tc.data, typ, raw, tc.code)
		}
	}
	if res := a.result("step", map[string]any{"message": "5"}); res.Observation.Turn != 1 {
		t.Errorf("after errors the session plays on: turn %d", res.Observation.Turn)
	}
	if code := call(t, ts.Client(), "POST", ts.URL+"/step", "", map[string]any{"action": map[string]any{"message": "x"}}, nil); code != 400 {
		t.Errorf("POST /step without episode_id: %d, want 400", code)
	}
}

// With a token, /ws and the control routes refuse clients without it;
// /health and /schema stay open, like /healthz.
func TestOpenEnvNeedsTheToken(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config, _ *Options) { c.Token = "sekret"; c.OpenEnvTask = "guess" })
	if _, err := dialOpenEnv(t, ts.URL, ""); err == nil {
		t.Fatal("/ws without the token: connected")
	}
	ws, err := dialOpenEnv(t, ts.URL, "sekret")
	if err != nil {
		t.Fatal(err)
	}
	ws.result("reset", nil)
	if code := call(t, ts.Client(), "POST", ts.URL+"/reset", "", map[string]any{}, nil); code != 401 {
		t.Errorf("POST /reset without the token: %d", code)
	}
	for _, p := range []string{"/health", "/schema", "/metadata"} {
		if code := call(t, ts.Client(), "GET", ts.URL+p, "", nil, nil); code != 200 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

// /schema describes every field the observation, action and state carry.
func TestOpenEnvSchemaDescribesTheWire(t *testing.T) {
	var schema map[string]struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(openEnvSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"action": OpenEnvAction{}, "observation": OpenEnvObservation{}, "state": OpenEnvState{}} {
		fields := jsonFields(reflect.TypeOf(v))
		for _, f := range fields {
			if _, ok := schema[name].Properties[f]; !ok {
				t.Errorf("/schema's %s lacks %q", name, f)
			}
		}
		if len(schema[name].Properties) != len(fields) {
			t.Errorf("/schema's %s has %d properties, the wire %d (%v)", name, len(schema[name].Properties), len(fields), fields)
		}
	}
}

func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// At shutdown a session answers the step in hand, then closes, and Serve
// waits for it: the WebSocket is a hijacked connection, which the HTTP
// server's own shutdown neither waits for nor closes.
func TestOpenEnvShutdownFinishesTheStepInHand(t *testing.T) {
	u := slowUser{started: make(chan struct{}, 1), release: make(chan struct{})}
	s, err := New(DefaultConfig(), Options{Task: taskByName(guessTask{user: u})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	ws, err := dialOpenEnv(t, "http://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	ws.result("reset", map[string]any{"task": "guess"})
	stepped := make(chan string, 1)
	go func() { // no t.Fatal off the test's goroutine: the reply or the error goes back
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ws.c.Write(ctx, websocket.MessageText, []byte(`{"type":"step","data":{"message":"1"}}`)); err != nil {
			stepped <- err.Error()
			return
		}
		_, raw, err := ws.c.Read(ctx)
		if err != nil {
			stepped <- err.Error()
			return
		}
		stepped <- string(raw)
	}()
	<-u.started
	stop() // SIGINT arrives mid-step
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a step in hand", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(u.release)
	if got := <-stepped; !strings.Contains(got, `"reply":"ok"`) {
		t.Errorf("the step in hand: %s", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v, want a clean stop", err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := ws.c.Read(rctx); err == nil {
		t.Error("the session is still open after shutdown")
	}
}

// A /ws session that sends nothing for WSIdleTimeout is closed (status
// 1008) and frees its place, though its episode's TTL is far longer: a
// stalled client holds a session slot for a bounded time only.
func TestOpenEnvIdleSessionClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	_, ts := newTestServer(t, func(c *Config, _ *Options) {
		c.OpenEnvSessions = 1
		c.OpenEnvTask = "guess"
		c.EpisodeTTL = time.Hour
		c.WSIdleTimeout = idle
	})
	a, err := dialOpenEnv(t, ts.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	a.result("reset", nil)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err = a.c.Read(ctx) // the client sends nothing more
	took := time.Since(start)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("a silent session: read %v after %v, want the server to close it", err, took)
	}
	if s := websocket.CloseStatus(err); s != websocket.StatusPolicyViolation {
		t.Errorf("close status %v (%v), want %v", s, err, websocket.StatusPolicyViolation)
	}
	if took < idle || took > idle+2*time.Second {
		t.Errorf("closed after %v, want about %v", took, idle)
	}
	// Its place is free for the next session.
	var typ string
	for range 100 {
		b, err := dialOpenEnv(t, ts.URL, "")
		if err != nil {
			t.Fatal(err)
		}
		if typ, _ = b.send("reset", nil); typ == "observation" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if typ != "observation" {
		t.Errorf("after the idle session closed, a new one got %s, want its reset played", typ)
	}
}
