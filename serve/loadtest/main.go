// Command loadtest measures what a trainer sees when the serve replicas
// behind it fail: it starts two `calibrl serve` processes on loopback,
// plays many episodes at once against them with the scripted agent (every
// turn carrying the conversation, as verl's message list does), kills one
// replica with SIGKILL mid-run and starts it again, and then replays every
// episode on an in-process server that nothing interrupts, to count the
// episodes lost or changed.
//
//	go run ./serve/loadtest --episodes 200 --clients 32 --route alternate
//
// The client retries a turn that fails for want of a server (connection
// refused or reset, 5xx) on the other replica, as a trainer's HTTP client
// with retries does; it never retries a 4xx. Everything listens on
// 127.0.0.1 and the run stops by itself (--timeout).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/serve"
	"github.com/calibrl/calibrl/task"
)

type config struct {
	bin       string
	episodes  int
	clients   int
	taskName  string
	user      string
	profile   string
	route     string
	killAfter float64
	downFor   time.Duration
	timeout   time.Duration
	attempts  int
	history   bool
	think     time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.bin, "calibrl", "", "calibrl binary (default: go build ./cmd/calibrl into a temporary folder)")
	flag.IntVar(&c.episodes, "episodes", 200, "episodes to play")
	flag.IntVar(&c.clients, "clients", 32, "episodes in play at once")
	flag.StringVar(&c.taskName, "task", "mathchat", "task")
	flag.StringVar(&c.user, "user", "human", "user")
	flag.StringVar(&c.profile, "agent", "careful", "scripted agent profile")
	flag.StringVar(&c.route, "route", "alternate", "alternate: each turn to the other replica; sticky: an episode's turns to one replica, the other on failure")
	flag.Float64Var(&c.killAfter, "kill-after", 0.3, "kill replica 0 once this fraction of the episodes is done (0: no kill)")
	flag.DurationVar(&c.downFor, "down-for", 100*time.Millisecond, "how long the killed replica stays down")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "the whole run's limit")
	flag.IntVar(&c.attempts, "attempts", 6, "tries per request before the episode counts as lost")
	flag.DurationVar(&c.think, "think", 20*time.Millisecond, "the policy's time to write each turn (a trainer's generation), slept before it is sent")
	flag.BoolVar(&c.history, "history", true, "send the conversation with every turn (false: only the message, as clients before recovery did)")
	flag.Parse()
	if c.route != "alternate" && c.route != "sticky" {
		log.Fatalf("--route %q: want alternate or sticky", c.route)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if err := run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

// replica is one serve process on a loopback port.
type replica struct {
	bin, addr string
	cmd       *exec.Cmd
	log       *os.File
}

func (r *replica) start(ctx context.Context) error {
	r.cmd = exec.Command(r.bin, "serve", "--addr", r.addr)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		return err
	}
	for ctx.Err() == nil {
		resp, err := http.Get("http://" + r.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ctx.Err()
}

func (r *replica) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGKILL)
		r.cmd.Wait()
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// episodeRun is one episode as the client played it.
type episodeRun struct {
	index int
	turns []serve.TurnResponse
	err   error
}

// stats is what the trainer side saw.
type stats struct {
	mu        sync.Mutex
	latencies []time.Duration // per turn, retries included
	retries   atomic.Int64    // requests sent again
	failures  map[string]int  // why a request was retried, or failed
	replayed  atomic.Int64
	recovered atomic.Int64 // turns whose replica replayed at least one turn
}

func (s *stats) note(why string) {
	s.mu.Lock()
	s.failures[why]++
	s.mu.Unlock()
}

func run(ctx context.Context, c config) error {
	dir, err := os.MkdirTemp("", "calibrl-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if c.bin == "" {
		c.bin = filepath.Join(dir, "calibrl")
		build := exec.CommandContext(ctx, "go", "build", "-o", c.bin, "./cmd/calibrl")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build calibrl (run from the repository root, or pass --calibrl): %w", err)
		}
	}
	reps := make([]*replica, 2)
	for i := range reps {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("replica%d.log", i)))
		if err != nil {
			return err
		}
		defer f.Close()
		reps[i] = &replica{bin: c.bin, addr: addr, log: f}
		if err := reps[i].start(ctx); err != nil {
			return fmt.Errorf("replica %d: %w", i, err)
		}
		defer reps[i].kill()
	}
	tk, err := task.Lookup(c.taskName)
	if err != nil {
		return err
	}
	agent, err := tk.Agent(c.profile)
	if err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: c.clients, DisableKeepAlives: false}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	st := &stats{failures: map[string]int{}}
	bases := []string{"http://" + reps[0].addr, "http://" + reps[1].addr}

	// The kill: once killAfter of the episodes are done, SIGKILL replica
	// 0, wait downFor, start it again on the same port.
	var done, next atomic.Int64
	killAt := int64(c.killAfter * float64(c.episodes))
	killed := make(chan struct{})
	var downSince, upAgain time.Time
	var killedAt, inFlight int64
	go func() {
		defer close(killed)
		if c.killAfter <= 0 {
			return
		}
		for done.Load() < killAt && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		reps[0].kill()
		downSince = time.Now()
		killedAt = done.Load()
		inFlight = min(next.Load(), int64(c.episodes)) - killedAt
		log.Printf("killed replica 0 (SIGKILL) after %d episodes, %d in play", killedAt, inFlight)
		time.Sleep(c.downFor)
		if err := reps[0].start(ctx); err != nil {
			log.Printf("restart replica 0: %v", err)
			return
		}
		upAgain = time.Now()
		log.Printf("replica 0 up again after %v", upAgain.Sub(downSince).Round(time.Millisecond))
	}()

	runs := make([]episodeRun, c.episodes)
	var wg sync.WaitGroup
	start := time.Now()
	for range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= c.episodes || ctx.Err() != nil {
					return
				}
				runs[i] = play(ctx, c, hc, bases, agent, i, st)
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	<-killed

	// The reference: every episode again on one in-process server that
	// nothing interrupts.
	ref, err := serve.New(serve.DefaultConfig(), serve.Options{})
	if err != nil {
		return err
	}
	ts := httptest.NewServer(ref.Handler())
	defer ts.Close()
	refStats := &stats{failures: map[string]int{}}
	lost, changed := 0, 0
	var turns int
	for i, r := range runs {
		if r.err != nil {
			lost++
			log.Printf("episode %d lost: %v", i, r.err)
			continue
		}
		want := play(ctx, config{taskName: c.taskName, user: c.user, route: "sticky", attempts: 1, history: true}, ts.Client(), []string{ts.URL, ts.URL}, agent, i, refStats)
		if want.err != nil {
			return fmt.Errorf("reference episode %d: %w", i, want.err)
		}
		turns += len(r.turns)
		for j := range r.turns {
			r.turns[j].Info.Replayed = 0
		}
		if !reflect.DeepEqual(r.turns, want.turns) {
			changed++
			log.Printf("episode %d differs from the uninterrupted one:\n got %+v\nwant %+v", i, r.turns, want.turns)
		}
	}

	lat := st.latencies
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	fmt.Printf("history %v, route %s, %d episodes, %d clients, think %v, task %s, user %s, agent %s\n", c.history, c.route, c.episodes, c.clients, c.think, c.taskName, c.user, c.profile)
	if !downSince.IsZero() {
		fmt.Printf("replica 0 killed (SIGKILL) after %d episodes with %d in play, down %v, restarted at %v of the run\n", killedAt, inFlight, upAgain.Sub(downSince).Round(time.Millisecond), upAgain.Sub(start).Round(time.Millisecond))
	}
	fmt.Printf("episodes lost: %d; changed (vs uninterrupted): %d; turns: %d in %v (%.0f turns/s)\n", lost, changed, turns, elapsed.Round(time.Millisecond), float64(turns)/elapsed.Seconds())
	fmt.Printf("turn latency as the client saw it (retries included): p50 %v p99 %v max %v\n", pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	fmt.Printf("turns answered after replaying: %d; turns replayed: %d (%.2f per turn)\n", st.recovered.Load(), st.replayed.Load(), float64(st.replayed.Load())/float64(max(turns, 1)))
	fmt.Printf("requests retried: %d; reasons: %v\n", st.retries.Load(), st.failures)
	if lost > 0 || changed > 0 {
		return fmt.Errorf("%d episodes lost, %d changed", lost, changed)
	}
	return nil
}

// play runs episode i (task instance i, seed 1) to its end.
func play(ctx context.Context, c config, hc *http.Client, bases []string, agent dialog.Agent, i int, st *stats) episodeRun {
	out := episodeRun{index: i}
	var cr serve.CreateResponse
	pick := func(turn int) int {
		if c.route == "alternate" {
			return (i + turn) % 2
		}
		return i % 2
	}
	if err := send(ctx, c, hc, bases, pick(0), "/v1/episodes", serve.CreateRequest{Task: c.taskName, User: c.user, Index: &i, Seed: 1}, &cr, st); err != nil {
		out.err = fmt.Errorf("create: %w", err)
		return out
	}
	obs := cr.Observation
	s := agent.NewSession(&dialog.View{Task: c.taskName, Instructions: obs.Instructions, Draft: obs.Draft}, rand.New(rand.NewPCG(uint64(i), 2)))
	msgs := obs.Messages
	hist := []serve.HistoryMessage{{Role: "system", Content: obs.System}}
	for _, m := range obs.Messages {
		hist = append(hist, serve.HistoryMessage{Role: string(m.Role), Content: m.Content})
	}
	for n := 1; n <= 64; n++ {
		text, err := s.Act(ctx, msgs)
		if err != nil {
			out.err = err
			return out
		}
		hist = append(hist, serve.HistoryMessage{Role: "assistant", Content: text})
		select {
		case <-ctx.Done():
			out.err = ctx.Err()
			return out
		case <-time.After(c.think):
		}
		var r serve.TurnResponse
		t0 := time.Now()
		if err := send(ctx, c, hc, bases, pick(n), "/v1/episodes/"+cr.ID+"/turns", turnRequest(c, text, hist), &r, st); err != nil {
			out.err = fmt.Errorf("turn %d: %w", n, err)
			return out
		}
		st.mu.Lock()
		st.latencies = append(st.latencies, time.Since(t0))
		st.mu.Unlock()
		if r.Info.Replayed > 0 {
			st.recovered.Add(1)
			st.replayed.Add(int64(r.Info.Replayed))
		}
		out.turns = append(out.turns, r)
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: text})
		// verl's way: the notes and the reply come back as one user message.
		var parts []string
		for _, p := range []dialog.Message{{Role: dialog.RoleSystem, Content: r.Note}, {Role: dialog.RoleUser, Content: r.Reply}, {Role: dialog.RoleSystem, Content: r.ReplyNote}} {
			if p.Content != "" {
				msgs = append(msgs, p)
				parts = append(parts, p.Content)
			}
		}
		if len(parts) > 0 {
			hist = append(hist, serve.HistoryMessage{Role: "user", Content: joinBlank(parts)})
		}
		if r.Done {
			return out
		}
	}
	out.err = errors.New("not done after 64 turns")
	return out
}

func turnRequest(c config, text string, hist []serve.HistoryMessage) serve.TurnRequest {
	if !c.history {
		return serve.TurnRequest{Message: text}
	}
	return serve.TurnRequest{Message: text, Messages: hist}
}

func joinBlank(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

// send posts body to bases[first] and, when that fails for want of a
// server, to the other replica, up to c.attempts tries with a short
// backoff. A 4xx is the client's error: it is returned, not retried.
func send(ctx context.Context, c config, hc *http.Client, bases []string, first int, path string, body, out any, st *stats) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	var last error
	for try := range c.attempts {
		if try > 0 {
			st.retries.Add(1)
			time.Sleep(time.Duration(try) * 25 * time.Millisecond)
		}
		base := bases[(first+try)%len(bases)]
		req, err := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			st.note("transport: " + transportReason(err))
			last = err
			continue
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			st.note("transport: read")
			last = err
			continue
		}
		switch {
		case resp.StatusCode < 300:
			return json.Unmarshal(raw, out)
		case resp.StatusCode >= 500:
			st.note(fmt.Sprintf("status %d", resp.StatusCode))
			last = fmt.Errorf("%s: status %d: %s", base, resp.StatusCode, raw)
			continue
		default:
			st.note(fmt.Sprintf("status %d", resp.StatusCode))
			return fmt.Errorf("%s: status %d: %s", base, resp.StatusCode, raw)
		}
	}
	return fmt.Errorf("after %d tries: %w", c.attempts, last)
}

// transportReason names a transport error's kind for the tally.
func transportReason(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case strings.Contains(err.Error(), "server closed idle connection"):
		return "server closed idle connection"
	}
	return "other"
}
