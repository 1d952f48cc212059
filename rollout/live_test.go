package rollout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

// logged is the episode Play starts for (split, index, sample) of guessTask.
func logged(t *testing.T, cfg Config, index, sample int) dialog.Episode {
	t.Helper()
	o, v, err := guessTask{}.Instance(cfg.Split, index)
	if err != nil {
		t.Fatal(err)
	}
	return dialog.Episode{
		ID: fmt.Sprintf("guess/%s/%d/%d", cfg.Split, index, sample), Task: "guess", Split: cfg.Split,
		MaxTurns: cfg.MaxTurns, Seed: EpisodeSeed(cfg.Seed, index, sample), Index: index, Sample: sample,
		Oracle: *o, View: *v,
	}
}

// drive plays l to its end one turn at a time: the agent when the last
// message is the user's, else the user.
func drive(t *testing.T, l *Live) {
	t.Helper()
	ctx := context.Background()
	for !l.Done() {
		msgs := l.Ep.Messages
		var err error
		if msgs[len(msgs)-1].Role == dialog.RoleUser {
			err = l.AgentTurn(ctx)
		} else {
			err = l.UserTurn(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	l.Finish(guessTask{})
}

// An episode driven by hand, open, turns and finish, is the one Play
// plays for the same instance, sample and seed, environment notes
// included.
func TestHandDrivenEpisodeIsPlays(t *testing.T) {
	cfg := Config{Split: "test", Instances: 12, Group: 2, Seed: 5, MaxTurns: 5}
	for _, tk := range []Task{guessTask{}, echoEnvTask{}} {
		want, err := Run(context.Background(), tk, randomAgent{}, guessUser{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			l := Begin(logged(t, cfg, i/2, i%2), randomAgent{}, guessUser{}, Rules{Env: dialog.EnvironmentOf(tk)})
			if err := l.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			drive(t, l)
			if !reflect.DeepEqual(l.Ep, w) {
				t.Fatalf("%T %s: driven by hand\n%+v\nplayed\n%+v", tk, w.ID, l.Ep, w)
			}
		}
	}
}

// Resuming a played episode from any prefix, with its own seed, and
// playing on gives the episode again: the replay brings both stateful
// sessions (the user's patience and dice, the agent's dice) to where the
// prefix left them.
//
// With an environment, a prefix cut just after an agent turn gets the
// environment's note on it, and the user's turns after notes are replayed
// too.
func TestResumeFromAPrefixEqualsPlaying(t *testing.T) {
	cfg := Config{Split: "train", Instances: 15, Seed: 9, MaxTurns: 6}
	for _, tk := range []Task{guessTask{}, echoEnvTask{}} {
		eps, err := Run(context.Background(), tk, randomAgent{}, guessUser{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rules := Rules{Env: dialog.EnvironmentOf(tk)}
		cuts, notes := 0, 0
		for _, ep := range eps {
			for cut := 1; cut < len(ep.Messages); cut++ {
				start := ep
				start.Messages = ep.Messages[:cut]
				start.Turns, start.End, start.Reward, start.Success, start.Outcome, start.Tokens = 0, "", 0, false, "", 0
				l, err := Resume(context.Background(), start, randomAgent{}, guessUser{}, ep.Seed, rules)
				if err != nil {
					t.Fatal(err)
				}
				want := cut
				if ep.Messages[cut-1].Role == dialog.RoleAssistant && dialog.IsNote(ep.Messages[cut]) {
					want, notes = cut+1, notes+1 // the environment notes the prefix's last turn
				}
				if len(l.Ep.Messages) != want {
					t.Fatalf("%T %s cut %d: resumed with %d messages, want %d", tk, ep.ID, cut, len(l.Ep.Messages), want)
				}
				drive(t, l)
				if !reflect.DeepEqual(l.Ep, ep) {
					t.Fatalf("%T %s cut %d: resumed\n%+v\nplayed\n%+v", tk, ep.ID, cut, l.Ep.Messages, ep.Messages)
				}
				cuts++
			}
		}
		if cuts < 30 {
			t.Fatalf("%T: only %d cuts checked", tk, cuts)
		}
		if _, env := tk.(echoEnvTask); env && notes == 0 {
			t.Fatal("no cut after a noted turn")
		}
		// The logged array is never written: the resumed episode appends
		// to its own copy.
		if again, _ := Run(context.Background(), tk, randomAgent{}, guessUser{}, cfg); !reflect.DeepEqual(again, eps) {
			t.Fatalf("%T: resuming changed the logged episodes", tk)
		}
	}
}

// batchUser is guessUser answering and opening many sessions at once.
type batchUser struct {
	guessUser
	opens, replies int
}

func (b *batchUser) OpenBatch(ctx context.Context, ss []dialog.UserSession) ([]string, error) {
	b.opens++
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i], _ = s.Open(ctx)
	}
	return out, nil
}

func (b *batchUser) ReplyBatch(ctx context.Context, ss []dialog.UserSession, hs [][]dialog.Message) ([]string, []bool, error) {
	b.replies++
	texts, ends := make([]string, len(ss)), make([]bool, len(ss))
	for i, s := range ss {
		texts[i], ends[i], _ = s.Reply(ctx, hs[i])
	}
	return texts, ends, nil
}

// The batch helpers give the same episodes whether the players answer in
// batches or one session at a time, on one worker or many, and a batch
// player is asked once per step.
func TestBatchAndSingleAgree(t *testing.T) {
	cfg := Config{Split: "test", Instances: 10, Group: 2, Seed: 3, MaxTurns: 6}
	play := func(agent dialog.Agent, user dialog.User, workers int) []dialog.Episode {
		var eps []*Live
		for i := range cfg.Instances * cfg.Group {
			eps = append(eps, Begin(logged(t, cfg, i/2, i%2), agent, user, Rules{Env: evenNote{}}))
		}
		ctx := context.Background()
		if err := OpenAll(ctx, user, eps, workers); err != nil {
			t.Fatal(err)
		}
		for active := eps; len(active) > 0; active = Playing(active) {
			if err := ActAll(ctx, agent, active, workers); err != nil {
				t.Fatal(err)
			}
			if err := ReplyAll(ctx, user, active, workers); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]dialog.Episode, len(eps))
		for i, l := range eps {
			l.Finish(guessTask{})
			out[i] = l.Ep
		}
		return out
	}
	want := play(randomAgent{}, guessUser{}, 1)
	if got := play(randomAgent{}, guessUser{}, 7); !reflect.DeepEqual(got, want) {
		t.Fatal("7 workers differ from 1")
	}
	a, u := &batchAgent{}, &batchUser{}
	if got := play(a, u, 1); !reflect.DeepEqual(got, want) {
		t.Fatal("batch players differ from single ones")
	}
	if u.opens != 1 || a.calls == 0 || a.calls > cfg.MaxTurns || u.replies != a.calls {
		t.Fatalf("batch calls: %d openings, %d agent steps, %d user steps: want 1, 1..%d, as many as the agent's", u.opens, a.calls, u.replies, cfg.MaxTurns)
	}

	// The session-level helpers agree too.
	sessions := func(user dialog.User) []dialog.UserSession {
		var ss []dialog.UserSession
		for i := range 6 {
			ep := logged(t, cfg, i, 0)
			ss = append(ss, user.NewSession(&ep.Oracle, UserRand(ep.Seed)))
		}
		return ss
	}
	histories := make([][]dialog.Message, 6)
	for i := range histories {
		histories[i] = []dialog.Message{{Role: dialog.RoleUser, Content: "guess my number"}, {Role: dialog.RoleAssistant, Content: fmt.Sprint(i)}}
	}
	single, batch := sessions(guessUser{}), sessions(&batchUser{})
	o1, err1 := Openings(context.Background(), guessUser{}, single, 3)
	o2, err2 := Openings(context.Background(), &batchUser{}, batch, 3)
	t1, e1, err3 := Replies(context.Background(), guessUser{}, single, histories, 3)
	t2, e2, err4 := Replies(context.Background(), &batchUser{}, batch, histories, 3)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(t1, t2) || !reflect.DeepEqual(e1, e2) {
		t.Fatalf("single %q %q %v, batch %q %q %v", o1, t1, e1, o2, t2, e2)
	}
}

// shortBatchUser answers one conversation fewer than it was asked.
type shortBatchUser struct{ guessUser }

func (shortBatchUser) ReplyBatch(_ context.Context, ss []dialog.UserSession, _ [][]dialog.Message) ([]string, []bool, error) {
	return make([]string, len(ss)-1), make([]bool, len(ss)-1), nil
}

// A session's error names its conversation; a batch that answers too few
// is refused.
func TestHelperErrors(t *testing.T) {
	ss := []dialog.UserSession{guessUser{}.NewSession(&dialog.Oracle{}, UserRand(1)), failingSession{}}
	hs := [][]dialog.Message{{{Role: dialog.RoleAssistant, Content: "1"}}, {{Role: dialog.RoleAssistant, Content: "2"}}}
	if _, _, err := Replies(context.Background(), guessUser{}, ss, hs, 1); err == nil || !strings.Contains(err.Error(), "conversation 1") || !strings.Contains(err.Error(), "endpoint down") {
		t.Fatalf("got %v, want the error of conversation 1", err)
	}
	if _, _, err := Replies(context.Background(), shortBatchUser{}, ss, hs, 1); err == nil || !strings.Contains(err.Error(), "answered 1 of 2") {
		t.Fatalf("short batch: got %v", err)
	}
}

// flakyUser fails its first reply, then answers as guessUser.
type flakyUser struct{ guessUser }

func (flakyUser) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &flakySession{guessUserSession: guessUserSession{o: o, rng: rng}}
}

type flakySession struct {
	guessUserSession
	failed bool
}

func (s *flakySession) Reply(ctx context.Context, h []dialog.Message) (string, bool, error) {
	if !s.failed {
		s.failed = true
		return "", false, errors.New("timeout")
	}
	return s.guessUserSession.Reply(ctx, h)
}

// A turn the user could not answer leaves the record as it was and may be
// sent again; the turn limit and the user's own end finish the episode
// with their reasons; a solved end with a wrong outcome is the user's.
func TestExchangeAndEnds(t *testing.T) {
	cfg := Config{Split: "test", Seed: 1, MaxTurns: 2}
	ep := logged(t, cfg, 0, 0) // truth (0*7+4)%10 = 4
	l := Begin(ep, nil, flakyUser{}, Rules{Env: evenNote{}})
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := append([]dialog.Message(nil), l.Ep.Messages...)
	if _, err := l.Exchange(context.Background(), "2"); err == nil {
		t.Fatal("want the user's error")
	}
	if !reflect.DeepEqual(l.Ep.Messages, before) || l.Ep.Turns != 0 {
		t.Fatalf("after a failed exchange: %+v, %d turns; want %+v, 0", l.Ep.Messages, l.Ep.Turns, before)
	}
	x, err := l.Exchange(context.Background(), "2")
	if err != nil || x.Note != "even: 2" || x.Reply == "" || x.ReplyNote != "" || x.End || l.Done() {
		t.Fatalf("exchange: %+v done %v err %v", x, l.Done(), err)
	}
	if _, err := l.Exchange(context.Background(), "8"); err != nil || !l.Done() || l.Ep.End != dialog.MaxTurns {
		t.Fatalf("at the turn limit: done %v end %q err %v", l.Done(), l.Ep.End, err)
	}
	l.Finish(guessTask{})
	if l.Ep.Turns != 2 || l.Ep.Success || l.Ep.Outcome != "8" || l.Ep.Tokens == 0 {
		t.Fatalf("finished %+v", l.Ep)
	}

	solved := Begin(ep, nil, guessUser{}, Rules{})
	solved.Opened("hi")
	solved.Said("4")
	solved.Heard("yes!", true)
	solved.Ep.End = dialog.Solved
	solved.Finish(wrongTask{})
	if solved.Ep.End != dialog.UserEnded {
		t.Fatalf("solved with a wrong outcome: end %q, want %q", solved.Ep.End, dialog.UserEnded)
	}
}

// wrongTask scores every conversation as failed.
type wrongTask struct{ guessTask }

func (wrongTask) Score(*dialog.Oracle, []dialog.Message) dialog.Score { return dialog.Score{} }
