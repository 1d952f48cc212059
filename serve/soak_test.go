package serve

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// ballastUser is a user that holds size bytes, as a learned user holds its
// model: what the server keeps per cached environment.
type ballastUser struct {
	guessUser
	ballast []byte
}

func newBallastUser(size int) dialog.User {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i) // touched, so it is resident
	}
	return &ballastUser{ballast: b}
}

// heapInUse is the heap in use after a full collection, in MiB.
func heapInUse() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// apiErrorReply is an error reply.
type apiErrorReply struct {
	Error apiError `json:"error"`
}

// TestSoakBounds drives the service past each bound a client can reach on
// loopback and checks that memory stays flat: the environments cached
// (one per canonical task name, least recently used evicted), the bytes
// one episode holds (413), and the bytes all episodes hold (429). Every
// environment holds 1 MiB, as a small learned user's model does; before
// the bounds, each spelling of a task kept one forever.
func TestSoakBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	const (
		ballast  = 1 << 20
		msgBytes = 1000 << 10 // under the 1 MiB body bound with its JSON
		heldMax  = 48 << 20
		spell    = 160
	)
	s, ts := newTestServer(t, func(c *Config, o *Options) {
		c.MaxTurns = 20
		c.MaxHeldBytes = heldMax
		o.Task = task.Lookup
		o.User = func(task.Task, string) (dialog.User, error) { return newBallastUser(ballast), nil }
	})
	c := ts.Client()
	base := heapInUse()
	served := 0

	// Environments: 160 spellings, of one task (h1, h01, h001, ...) and of
	// many (h2 ... h81), each episode deleted at once.
	for i := range spell {
		name := "mathchat:h" + strings.Repeat("0", i/2) + "1"
		if i%2 == 1 {
			name = fmt.Sprintf("mathchat:h%d", 2+i/2)
		}
		var cr CreateResponse
		if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: name}, &cr); st != 201 {
			t.Fatalf("create %s: %d", name, st)
		}
		if st := call(t, c, "DELETE", ts.URL+"/v1/episodes/"+cr.ID, "", nil, nil); st != 204 {
			t.Fatalf("delete: %d", st)
		}
		served += 2
	}
	envGrowth := heapInUse() - base
	// 64 environments of 1 MiB, and what the tasks themselves hold.
	if limit := float64(DefaultConfig().MaxEnvironments) + 32; envGrowth > limit {
		t.Errorf("after %d episodes of distinct task spellings, deleted, the heap grew %.0f MiB, want under %.0f (the environment cache's bound)", spell, envGrowth, limit)
	}

	// One episode: 1000 KiB turns until the episode's bound (413).
	msg := strings.Repeat("x", msgBytes)
	var cr CreateResponse
	if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat:easy"}, &cr); st != 201 {
		t.Fatalf("create: %d", st)
	}
	turns, status := 0, 0
	var er apiErrorReply
	for turns < 15 {
		er = apiErrorReply{}
		if status = call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: msg}, &er); status != 200 {
			break
		}
		turns++
		served++
	}
	want := int(DefaultConfig().MaxEpisodeBytes / msgBytes)
	if status != http.StatusRequestEntityTooLarge || er.Error.Code != "episode_bytes_exceeded" || turns != want {
		t.Errorf("one episode of %d KiB turns: stopped after %d turns with %d %+v; want 413 episode_bytes_exceeded after %d", msgBytes>>10, turns, status, er.Error, want)
	}
	call(t, c, "DELETE", ts.URL+"/v1/episodes/"+cr.ID, "", nil, nil)

	// Many episodes, four clients at once, until the server's bound (429).
	base = heapInUse()
	var (
		mu      sync.Mutex
		ids     []string
		full    atomic.Int32
		fullErr apiErrorReply
		wg      sync.WaitGroup
		n       atomic.Int32
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ep := 0; ep < 30 && full.Load() == 0; ep++ {
				var cr struct {
					CreateResponse
					Error apiError `json:"error"`
				}
				var er apiErrorReply
				st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat:easy"}, &cr)
				if st == http.StatusTooManyRequests {
					mu.Lock()
					fullErr.Error = cr.Error
					mu.Unlock()
					full.Add(1)
					return
				}
				if st != 201 {
					t.Errorf("create: %d", st)
					return
				}
				mu.Lock()
				ids = append(ids, cr.ID)
				mu.Unlock()
				for range 5 {
					st := call(t, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: msg}, &er)
					n.Add(1)
					if st == http.StatusTooManyRequests {
						mu.Lock()
						fullErr = er
						mu.Unlock()
						full.Add(1)
						return
					}
					if st != 200 {
						t.Errorf("turn: %d %+v", st, er.Error)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	served += int(n.Load()) + len(ids)
	heldGrowth := heapInUse() - base
	if full.Load() == 0 || fullErr.Error.Code != "server_bytes_exceeded" {
		t.Errorf("%d episodes of 5 turns of %d KiB, %.0f MiB held: got no 429 server_bytes_exceeded (last %+v)", len(ids), msgBytes>>10, heldGrowth, fullErr.Error)
	}
	if limit := float64(heldMax>>20) + 16; heldGrowth > limit {
		t.Errorf("with %d episodes held the heap grew %.0f MiB, want under %.0f (--max-held-bytes %d MiB)", len(ids), heldGrowth, limit, heldMax>>20)
	}
	if got := s.bytes.total(); got > heldMax {
		t.Errorf("held %d bytes, over the bound %d", got, heldMax)
	}
	for _, id := range ids {
		call(t, c, "DELETE", ts.URL+"/v1/episodes/"+id, "", nil, nil)
	}
	if got := s.bytes.total(); got != 0 {
		t.Errorf("every episode deleted, the server still counts %d bytes held", got)
	}
	t.Logf("%d requests served; heap growth: %.1f MiB over %d task spellings, %.1f MiB with the server full (%d episodes, %d 429s)",
		served, envGrowth, spell, heldGrowth, len(ids), full.Load())
}

// TestEnvironmentCache: spellings of one task share one environment;
// environments no episode plays in are evicted least recently used first;
// when every cached one has a live episode, another task is refused with
// 429 environments_exceeded until one is deleted.
func TestEnvironmentCache(t *testing.T) {
	builds := map[string]int{}
	var mu sync.Mutex
	s, ts := newTestServer(t, func(c *Config, o *Options) {
		c.MaxEnvironments = 2
		o.Task = func(name string) (task.Task, error) {
			mu.Lock()
			builds[name]++
			mu.Unlock()
			return task.Lookup(name)
		}
	})
	c := ts.Client()
	create := func(name string, want int) string {
		t.Helper()
		var cr struct {
			CreateResponse
			Error apiError `json:"error"`
		}
		if st := call(t, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: name}, &cr); st != want {
			t.Fatalf("create %s: %d %+v, want %d", name, st, cr.Error, want)
		}
		if want == http.StatusTooManyRequests && cr.Error.Code != "environments_exceeded" {
			t.Errorf("create %s: code %q, want environments_exceeded", name, cr.Error.Code)
		}
		return cr.ID
	}
	create("mathchat:h1", 201)
	create("mathchat:h01", 201)
	create("mathchat:h001", 201)
	if s.envs.len() != 1 || builds["mathchat:h1"] != 1 || len(builds) != 1 {
		t.Errorf("three spellings of mathchat:h1: %d environments, builds %v; want one, built once", s.envs.len(), builds)
	}
	b := create("mathchat:h2", 201)
	create("mathchat:h3", http.StatusTooManyRequests) // h1 and h2 both have live episodes
	call(t, c, "DELETE", ts.URL+"/v1/episodes/"+b, "", nil, nil)
	create("mathchat:h3", 201) // h2 had none left: evicted
	if s.envs.len() != 2 {
		t.Errorf("%d environments cached, want the bound 2", s.envs.len())
	}
}

// TestRecoveryKeepsTheBoundsAccounts: episodes rebuilt from a client's
// conversation (recovered, caught up, started over) are charged what they
// hold, and give it back, with their use of the environment, when
// deleted: the accounts the bounds read do not drift.
func TestRecoveryKeepsTheBoundsAccounts(t *testing.T) {
	sa, a := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	sb, b := newTestServer(t, func(c *Config, o *Options) { o.Task = task.Lookup })
	c := a.Client()
	got := playServed(t, c, func(n int) string {
		if n <= 2 {
			return a.URL
		}
		return b.URL
	}, "mathchat", "human", "careful", 4, true)
	end := len(got.hist) - 1
	for got.hist[end].Role != "assistant" {
		end--
	}
	last := got.hist[:end+1]
	for _, base := range []string{a.URL, b.URL} { // a catches up, b starts over
		if st := call(t, c, "POST", base+"/v1/episodes/"+got.id+"/turns", "", TurnRequest{Message: last[len(last)-1].Content, Messages: last}, nil); st != http.StatusOK {
			t.Fatalf("resend last turn to %s: got status %d", base, st)
		}
	}
	for _, s := range []*Server{sa, sb} {
		e, ok := s.store.get(got.id)
		if !ok {
			t.Fatal("the episode is not held")
		}
		e.mu.Lock()
		holds := messageBytes(e.live.Ep.Messages)
		e.mu.Unlock()
		if got := s.bytes.total(); got != holds {
			t.Errorf("the server counts %d bytes held, the episode holds %d", got, holds)
		}
		if st := call(t, c, "DELETE", map[*Server]string{sa: a.URL, sb: b.URL}[s]+"/v1/episodes/"+got.id, "", nil, nil); st != http.StatusNoContent {
			t.Fatalf("delete: %d", st)
		}
		if got := s.bytes.total(); got != 0 {
			t.Errorf("after the delete the server counts %d bytes held", got)
		}
		s.envs.mu.Lock()
		for k, en := range s.envs.m {
			if en.refs != 0 {
				t.Errorf("environment %s: %d uses left after every episode was deleted", k, en.refs)
			}
		}
		s.envs.mu.Unlock()
	}
}
