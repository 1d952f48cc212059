package serve

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
	"github.com/calibrl/calibrl/task"
)

// seededSim is an OpenAI-compatible endpoint whose reply is a function of
// the request's seed and messages, as a served model at temperature 0
// with a fixed seed is: a rebuilt session that sent another seed, or
// another conversation, gets another reply. It ends the conversation when
// the agent says "bye".
func seededSim(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Seed     int64 `json:"seed"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		h := fnv.New64a()
		for _, m := range req.Messages {
			fmt.Fprintf(h, "%s\x00%s\x00", m.Role, m.Content)
		}
		last := req.Messages[len(req.Messages)-1].Content
		out, _ := json.Marshal(map[string]any{"message": fmt.Sprintf("reply %d/%x", req.Seed, h.Sum64()%4096), "end": strings.Contains(last, "bye")})
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 0, "model": "sim",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(out)}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func remoteSimServer(t *testing.T, sim *httptest.Server) *httptest.Server {
	reg, err := remote.NewRegistry(remote.Config{MaxAttempts: 1, BackoffBase: remote.Duration(time.Millisecond)}, []remote.Endpoint{{BaseURL: sim.URL + "/v1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, func(c *Config, o *Options) {
		c.Users = []string{"remote:sim", "human"}
		o.User = func(tk task.Task, name string) (dialog.User, error) {
			if name == dialog.Human.String() {
				return tk.User(dialog.Human)
			}
			p, err := reg.Pool(name[len("remote:"):])
			if err != nil {
				return nil, err
			}
			return remote.NewUser(p), nil
		}
	})
	return ts
}

// A remote user's episode played with every turn on another replica than
// the one before (a round-robin balancer), each turn carrying the
// conversation as calibrl_client.py sends it, says what the same episode
// says on one replica: every reply, the end and the reward. So does an
// episode opened with a row's opening that another user logged.
func TestRemoteUserEpisodeMovesBetweenReplicas(t *testing.T) {
	sim := seededSim(t)
	replicas := []*httptest.Server{remoteSimServer(t, sim), remoteSimServer(t, sim)}
	turns := []string{"what is it?", "tell me more", "is it 3?", "bye"}
	idx := 2
	rowOpening := "I logged this opening with the human proxy"
	for _, given := range []bool{false, true} {
		req := CreateRequest{Task: "guess", User: "remote:sim", Index: &idx, Seed: 11}
		if given {
			req.Opening, req.LoggedUser = &rowOpening, "human"
		}
		play := func(alternate bool) (msgs []HistoryMessage, last TurnResponse) {
			var cr CreateResponse
			if st := call(t, replicas[0].Client(), "POST", replicas[0].URL+"/v1/episodes", "", req, &cr); st != http.StatusCreated {
				t.Fatalf("create: %d", st)
			}
			if given && cr.Observation.Messages[0].Content != rowOpening {
				t.Fatalf("opened with %q, want the row's opening %q", cr.Observation.Messages[0].Content, rowOpening)
			}
			msgs = []HistoryMessage{{Role: "user", Content: cr.Observation.Messages[0].Content}}
			for i, text := range turns {
				at := replicas[0]
				if alternate {
					at = replicas[(i+1)%2]
				}
				var tr TurnResponse
				if st := call(t, at.Client(), "POST", at.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: text, Messages: msgs}, &tr); st != http.StatusOK {
					t.Fatalf("given %v alternate %v turn %d: got %d", given, alternate, i+1, st)
				}
				if alternate && i%2 == 0 && tr.Info.Replayed != i {
					t.Errorf("given %v turn %d on the other replica: replayed %d, want it rebuilt from the %d earlier turns", given, i+1, tr.Info.Replayed, i)
				}
				msgs = append(msgs, HistoryMessage{Role: "assistant", Content: text}, HistoryMessage{Role: "user", Content: tr.Reply})
				last = tr
				if tr.Done {
					break
				}
			}
			return msgs, last
		}
		want, wantLast := play(false)
		got, gotLast := play(true)
		if len(got) != len(want) {
			t.Fatalf("given %v: %d messages across replicas, %d on one", given, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("given %v: message %d across replicas %+v, on one replica %+v", given, i, got[i], want[i])
			}
		}
		if !gotLast.Done || gotLast.Reward != wantLast.Reward || gotLast.Info.End != wantLast.Info.End {
			t.Errorf("given %v: across replicas done %v reward %v end %s, on one %v %v %s", given, gotLast.Done, gotLast.Reward, gotLast.Info.End, wantLast.Done, wantLast.Reward, wantLast.Info.End)
		}
	}
}

// A row's opening opens the episode when it was logged with another user
// than the one the episode is played with; when the row names the same
// user (or none) and the user opens otherwise, the create is refused with
// the cause the row allows, not a guess.
func TestCreateWithARowsOpening(t *testing.T) {
	_, ts := newTestServer(t, nil)
	c := ts.Client()
	idx := 1
	var plain CreateResponse
	call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &idx, Seed: 5}, &plain)
	own := plain.Observation.Messages[0].Content
	row := "a row's opening nobody here says"
	for _, tc := range []struct {
		name, user, logged, opening string
		status                      int
		want                        string
	}{
		{"same user, same opening", "human", "human", own, 201, own},
		{"older row, same opening", "human", "", own, 201, own},
		{"another user logged it", "naive", "human", row, 201, row},
		{"same user, other opening", "human", "human", row, 409, "logged with this same user"},
		{"older row, other opening", "human", "", row, 409, "does not say which user"},
	} {
		opening := tc.opening
		var raw map[string]any
		st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", User: tc.user, Index: &idx, Seed: 5, Opening: &opening, LoggedUser: tc.logged}, &raw)
		b, _ := json.Marshal(raw)
		if st != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: got %d %s, want %d with %q", tc.name, st, b, tc.status, tc.want)
		}
		if st == 409 && !strings.Contains(string(b), codeOpeningMismatch) {
			t.Errorf("%s: %s lacks code %s", tc.name, b, codeOpeningMismatch)
		}
	}
	var h struct{ Episodes int }
	call(t, c, "GET", ts.URL+"/healthz", "", nil, &h)
	if h.Episodes != 4 {
		t.Errorf("%d episodes held, want 4: a refused create keeps none", h.Episodes)
	}
}

// toyEnv notes an agent turn and a reply, each by its text.
type toyEnv struct{}

func (toyEnv) Respond(_ *dialog.View, h []dialog.Message) string {
	last := h[len(h)-1]
	if last.Role == dialog.RoleUser {
		return "heard " + strings.ToUpper(last.Content)
	}
	return "noted " + last.Content
}

// replyIn finds the reply in each form a client holds it.
func TestReplyIn(t *testing.T) {
	ep := &dialog.Episode{Messages: []dialog.Message{{Role: dialog.RoleUser, Content: "hi"}, {Role: dialog.RoleAssistant, Content: "a"}, {Role: dialog.RoleSystem, Content: "noted a"}}}
	reply := "first line\n\nsecond line"
	for _, u := range []string{reply, "noted a\n\n" + reply, reply + "\n\nheard " + strings.ToUpper(reply), "noted a\n\n" + reply + "\n\nheard " + strings.ToUpper(reply)} {
		if got := replyIn(toyEnv{}, ep, "noted a", u); got != reply {
			t.Errorf("replyIn(%q) = %q, want %q", u, got, reply)
		}
	}
	if got := replyIn(nil, ep, "", reply); got != reply {
		t.Errorf("no environment: %q", got)
	}
}
