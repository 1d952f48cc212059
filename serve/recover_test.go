package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// played is one episode as a client saw it.
type played struct {
	id    string
	turns []TurnResponse
	hist  []HistoryMessage
}

// playServed plays one episode of taskName with user against the scripted
// agent profile from the client side, sending turn n (from 1) to
// base(n) and the create to base(0). With history, every turn carries
// the conversation so far ending with the turn itself, as verl's message
// list does; the environment's notes are system messages, as calibrl's
// own agents read them.
func playServed(t *testing.T, c *http.Client, base func(int) string, taskName, user, profile string, idx int, history bool) played {
	t.Helper()
	tk, err := task.Lookup(taskName)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := tk.Agent(profile)
	if err != nil {
		t.Fatal(err)
	}
	var cr CreateResponse
	if st := call(t, c, "POST", base(0)+"/v1/episodes", "", CreateRequest{Task: taskName, User: user, Index: &idx, Seed: 7}, &cr); st != http.StatusCreated {
		t.Fatalf("create %s/%s/%d: got status %d", taskName, user, idx, st)
	}
	obs := cr.Observation
	s := agent.NewSession(&dialog.View{Task: taskName, Instructions: obs.Instructions, Draft: obs.Draft}, rand.New(rand.NewPCG(uint64(idx), 2)))
	msgs := obs.Messages // what the agent reads
	p := played{id: cr.ID, hist: []HistoryMessage{{Role: "system", Content: obs.System}}}
	for _, m := range obs.Messages {
		p.hist = append(p.hist, HistoryMessage{Role: string(m.Role), Content: m.Content})
	}
	for n := 1; n <= 40; n++ {
		text, err := s.Act(context.Background(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		p.hist = append(p.hist, HistoryMessage{Role: "assistant", Content: text})
		req := TurnRequest{Message: text}
		if history {
			req.Messages = p.hist
		}
		var out struct {
			TurnResponse
			Error *apiError `json:"error"`
		}
		if st := call(t, c, "POST", base(n)+"/v1/episodes/"+cr.ID+"/turns", "", req, &out); st != http.StatusOK {
			t.Fatalf("%s/%s/%d turn %d: got status %d %+v", taskName, user, idx, n, st, out.Error)
		}
		r := out.TurnResponse
		p.turns = append(p.turns, r)
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: text})
		for _, m := range []dialog.Message{{Role: dialog.RoleSystem, Content: r.Note}, {Role: dialog.RoleUser, Content: r.Reply}, {Role: dialog.RoleSystem, Content: r.ReplyNote}} {
			if m.Content != "" {
				msgs = append(msgs, m)
				p.hist = append(p.hist, HistoryMessage{Role: string(m.Role), Content: m.Content})
			}
		}
		if r.Done {
			return p
		}
	}
	t.Fatalf("%s/%s/%d: not done after 40 turns", taskName, user, idx)
	return p
}

// freshServers starts a new server, sharing nothing with any other, for
// every turn: the worst a load balancer (or a restart) can do.
func freshServers(t *testing.T) func(int) string {
	return func(int) string {
		_, ts := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
		return ts.URL
	}
}

// TestEpisodeContinuesOnAFreshServer plays each episode twice: on one
// server, and with every turn sent to a new server that never saw the
// episode, carrying the conversation as verl does. The seeded users must
// give the same replies, notes and reward: the episode is not lost, and
// not silently replaced by another.
func TestEpisodeContinuesOnAFreshServer(t *testing.T) {
	_, one := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	c := one.Client()
	for _, tc := range []struct{ task, user, profile string }{
		{"mathchat", "human", "careful"},
		{"mathchat", "naive", "vague"},
		{"mathchat:h4", "human", "careful"},
		{"docedit", "human", "careful"},
	} {
		for idx := range 3 {
			same := func(int) string { return one.URL }
			want := playServed(t, c, same, tc.task, tc.user, tc.profile, idx, false)
			got := playServed(t, c, freshServers(t), tc.task, tc.user, tc.profile, idx, true)
			for n := range got.turns {
				if r := got.turns[n].Info.Replayed; r != n {
					t.Errorf("%s/%s/%d turn %d: replayed %d turns, want %d (a fresh server each turn)", tc.task, tc.user, idx, n+1, r, n)
				}
				got.turns[n].Info.Replayed = 0
			}
			if !reflect.DeepEqual(got.turns, want.turns) {
				t.Errorf("%s/%s/%d: across fresh servers the episode went\n%+v\nwant (one server)\n%+v", tc.task, tc.user, idx, got.turns, want.turns)
			}
			if !want.turns[len(want.turns)-1].Done {
				t.Errorf("%s/%s/%d: not done", tc.task, tc.user, idx)
			}
		}
	}
}

// TestRecoveryCatchesUpAndRestarts covers a held copy that is behind the
// client (turns went to another replica) and one that is ahead of it (the
// reply to the last turn was lost and the turn is sent again): both must
// answer as the uninterrupted episode does.
func TestRecoveryCatchesUpAndRestarts(t *testing.T) {
	_, one := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	_, a := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	_, b := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	c := one.Client()
	want := playServed(t, c, func(int) string { return one.URL }, "mathchat", "human", "careful", 4, false)
	if len(want.turns) < 3 {
		t.Fatalf("want an episode of at least 3 turns, got %d", len(want.turns))
	}
	// Turns 1 and 2 on a, the rest on b; then every turn again on a,
	// whose copy stopped after turn 2.
	got := playServed(t, c, func(n int) string {
		if n <= 2 {
			return a.URL
		}
		return b.URL
	}, "mathchat", "human", "careful", 4, true)
	if got.turns[2].Info.Replayed != 2 {
		t.Errorf("turn 3 on b replayed %d turns, want 2", got.turns[2].Info.Replayed)
	}
	// Resend the last turn to a (behind: it catches up) and to b (ahead:
	// it answered that turn already, and starts over).
	end := len(got.hist) - 1
	for got.hist[end].Role != "assistant" {
		end--
	}
	last := got.hist[:end+1]
	final := want.turns[len(want.turns)-1]
	for _, base := range []string{a.URL, b.URL} {
		var r TurnResponse
		if st := call(t, c, "POST", base+"/v1/episodes/"+got.id+"/turns", "", TurnRequest{Message: last[len(last)-1].Content, Messages: last}, &r); st != http.StatusOK {
			t.Fatalf("resend last turn to %s: got status %d", base, st)
		}
		r.Info.Replayed = 0
		if !reflect.DeepEqual(r, final) {
			t.Errorf("resent last turn on %s: got %+v, want %+v", base, r, final)
		}
	}
}

// TestRecoveryRefusesWhatItCannotReplay pins the errors a client acts on:
// a turn without the conversation, a conversation that is not the
// episode's, and an episode whose user is a remote model.
func TestRecoveryRefusesWhatItCannotReplay(t *testing.T) {
	mod := func(c *Config, o *Options) {
		o.Task = task.Lookup
		c.Users = []string{"human", "remote:gpt-x"}
		o.User = func(t task.Task, name string) (dialog.User, error) {
			if strings.HasPrefix(name, "remote:") {
				return t.User("human") // stands in: the name is what decides
			}
			return t.User(dialog.UserKind(name))
		}
	}
	_, a := newTestServer(t, mod)
	_, b := newTestServer(t, mod)
	c := a.Client()
	idx := 1
	var cr CreateResponse
	if st := call(t, c, "POST", a.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat", Index: &idx, Seed: 7}, &cr); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	opening := cr.Observation.Messages[0].Content
	var e struct{ Error apiError }
	cases := []struct {
		name   string
		base   string
		id     string
		req    TurnRequest
		status int
		code   string
	}{
		{"no messages on another replica", b.URL, cr.ID, TurnRequest{Message: "hi"}, 404, codeNotHeld},
		// The opening is the client's (a dataset row's): not checked.
		{"another opening", b.URL, cr.ID, TurnRequest{Message: "hi", Messages: []HistoryMessage{{Role: "user", Content: "not the opening"}}}, 200, ""},
		{"turn after a reply that was not given", b.URL, cr.ID, TurnRequest{Message: "b", Messages: []HistoryMessage{{Role: "user", Content: opening}, {Role: "assistant", Content: "a"}, {Role: "user", Content: "something the user never said"}}}, 409, codeMismatch},
		{"last agent turn is not message", b.URL, cr.ID, TurnRequest{Message: "b", Messages: []HistoryMessage{{Role: "user", Content: opening}, {Role: "assistant", Content: "a"}}}, 400, ""},
		{"unknown role", b.URL, cr.ID, TurnRequest{Message: "b", Messages: []HistoryMessage{{Role: "robot", Content: opening}}}, 400, ""},
		{"not an id of this server", b.URL, "ep_0123", TurnRequest{Message: "b", Messages: []HistoryMessage{{Role: "user", Content: opening}}}, 404, ""},
	}
	for _, tc := range cases {
		e.Error = apiError{}
		if st := call(t, c, "POST", tc.base+"/v1/episodes/"+tc.id+"/turns", "", tc.req, &e); st != tc.status || e.Error.Code != tc.code {
			t.Errorf("%s: got %d %+v, want %d code %q", tc.name, st, e.Error, tc.status, tc.code)
		}
	}

	// A remote user's episode is rebuilt elsewhere from the user's messages
	// the client sends, and refused with its own code when it sends none.
	if st := call(t, c, "POST", a.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat", User: "remote:gpt-x", Index: &idx, Seed: 7}, &cr); st != http.StatusCreated {
		t.Fatalf("create remote: %d", st)
	}
	e.Error = apiError{}
	if st := call(t, c, "POST", b.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "hello", Messages: []HistoryMessage{{Role: "system", Content: "be brief"}}}, &e); st != 404 || e.Error.Code != codeNotRecoverable || !strings.Contains(e.Error.Message, "user's messages") {
		t.Errorf("remote user on another replica without user messages: got %d %+v, want 404 %s asking for them", st, e.Error, codeNotRecoverable)
	}
	hist := []HistoryMessage{{Role: "user", Content: cr.Observation.Messages[0].Content}}
	var r TurnResponse
	if st := call(t, c, "POST", b.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "hello", Messages: hist}, &r); st != http.StatusOK {
		t.Errorf("remote user on another replica with the opening: got %d, want it rebuilt", st)
	}

	// A replica serving other users refuses the episode rather than
	// opening another one.
	_, other := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup; c.Users = []string{"naive"} })
	if st := call(t, c, "POST", a.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat", Index: &idx, Seed: 7}, &cr); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	e.Error = apiError{}
	hist = []HistoryMessage{{Role: "user", Content: cr.Observation.Messages[0].Content}}
	if st := call(t, c, "POST", other.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: "hello", Messages: hist}, &e); st != 400 || !strings.Contains(e.Error.Message, "not served here") {
		t.Errorf("replica without the user: got %d %+v, want 400 naming the user", st, e.Error)
	}
}

// TestEpisodeIDRoundTrip checks that an id reads back to its key, and
// that ids are one path segment.
func TestEpisodeIDRoundTrip(t *testing.T) {
	k := episodeKey{Task: "mathchat:data=sha256:ab/cd", Split: "test", User: "learned:runs/x/sim", Index: 1 << 30, Sample: 3, Seed: 1<<64 - 1, MaxTurns: 8, Nonce: newKeyNonce()}
	id := k.id()
	if strings.ContainsAny(id, "/?#%") {
		t.Errorf("id %q is not one path segment", id)
	}
	got, err := parseEpisodeID(id)
	if err != nil || got != k {
		t.Fatalf("got %+v, %v; want %+v", got, err, k)
	}
	for _, bad := range []string{"", "ep_0123", idPrefix, idPrefix + "!!", idPrefix + "e30", id + "A", fmt.Sprintf("%s%s", idPrefix, strings.Repeat("A", maxIDLen))} {
		if _, err := parseEpisodeID(bad); err == nil {
			t.Errorf("parseEpisodeID(%q): no error", bad)
		}
	}
}

// TestLearnedUserEpisodeContinuesOnAFreshServer is the fresh-server test
// with a model user: each server loads its own copy of the simulator (the
// same weights, as replicas load one checkpoint), and the replay must
// sample the same replies from the episode's seed.
func TestLearnedUserEpisodeContinuesOnAFreshServer(t *testing.T) {
	withSim := func(c *Config, o *Options) {
		_, u, _ := testSim(t)
		o.Task = task.Lookup
		c.Users = []string{"learned:sim"}
		o.User = func(task.Task, string) (dialog.User, error) { return u, nil }
	}
	_, one := newTestServer(t, withSim)
	c := one.Client()
	fresh := func(int) string {
		_, ts := newTestServer(t, withSim)
		return ts.URL
	}
	for idx := range 2 {
		want := playServed(t, c, func(int) string { return one.URL }, "mathchat:easy", "learned:sim", "careful", idx, false)
		got := playServed(t, c, fresh, "mathchat:easy", "learned:sim", "careful", idx, true)
		for n := range got.turns {
			got.turns[n].Info.Replayed = 0
		}
		if !reflect.DeepEqual(got.turns, want.turns) {
			t.Errorf("learned user, instance %d: across fresh servers the episode went\n%+v\nwant (one server)\n%+v", idx, got.turns, want.turns)
		}
	}
}
