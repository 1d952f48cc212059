package serve

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// BenchmarkServeEpisodes plays b.N whole guess episodes against the
// server over loopback TCP from 64 concurrent clients, then checks every
// transcript: no lost or duplicated turns, no errors. It reports turns/s
// and the 50th and 99th percentile turn latency.
func BenchmarkServeEpisodes(b *testing.B) {
	const clients = 64
	_, ts := newTestServer(b, func(c *Config, _ *Options) { c.MaxEpisodes = 1 << 20 })
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	b.Cleanup(tr.CloseIdleConnections)

	var (
		next   atomic.Int64
		turns  atomic.Int64
		errs   atomic.Int64
		mu     sync.Mutex
		lat    []time.Duration
		played = map[string]int{} // episode id → turns the client sent
	)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					break
				}
				var cr CreateResponse
				if st := call(b, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "guess", Index: &i, Seed: Seed(i)}, &cr); st != 201 {
					errs.Add(1)
					continue
				}
				lo, hi, n := 0, 9, 0
				for {
					g := (lo + hi) / 2
					var r TurnResponse
					t0 := time.Now()
					st := call(b, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: string(rune('0' + g))}, &r)
					mine = append(mine, time.Since(t0))
					if st != 200 || r.Info.Turn != n+1 {
						errs.Add(1)
						break
					}
					n++
					if r.Done {
						if r.Reward != 1 {
							errs.Add(1)
						}
						break
					}
					if r.Reply == "higher" {
						lo = g + 1
					} else {
						hi = g - 1
					}
				}
				turns.Add(int64(n))
				mu.Lock()
				if _, dup := played[cr.ID]; dup {
					errs.Add(1)
				}
				played[cr.ID] = n
				mu.Unlock()
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()

	for id, n := range played {
		var t Transcript
		if st := call(b, c, "GET", ts.URL+"/v1/episodes/"+id, "", nil, &t); st != 200 || t.Turns != n || len(t.Messages) != 1+2*n || !t.Done {
			b.Fatalf("episode %s: got status %d, %d turns, %d messages, done %v; want %d turns", id, st, t.Turns, len(t.Messages), t.Done, n)
		}
	}
	if errs.Load() != 0 || len(played) != b.N {
		b.Fatalf("got %d errors and %d of %d episodes", errs.Load(), len(played), b.N)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(turns.Load())/elapsed.Seconds(), "turns/s")
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(turns.Load())/float64(b.N), "turns/episode")
}

// BenchmarkServeMathchat is BenchmarkServeEpisodes on the real mathchat
// task and human proxy, with the scripted careful agent playing each
// episode from the client side over HTTP.
func BenchmarkServeMathchat(b *testing.B) {
	const clients = 64
	t, err := task.Lookup("mathchat")
	if err != nil {
		b.Skip(err)
	}
	agent, err := t.Agent("careful")
	if err != nil {
		b.Fatal(err)
	}
	_, ts := newTestServer(b, func(c *Config, o *Options) { c.MaxEpisodes = 1 << 20; o.Task = task.Lookup })
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	b.Cleanup(tr.CloseIdleConnections)

	var next, turns, errs atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					break
				}
				var cr CreateResponse
				if st := call(b, c, "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: "mathchat", Split: "test", Index: &i, Seed: 1}, &cr); st != 201 {
					errs.Add(1)
					continue
				}
				s := agent.NewSession(&dialog.View{Task: "mathchat", Instructions: cr.Observation.Instructions}, rand.New(rand.NewPCG(uint64(i), 2)))
				hist := cr.Observation.Messages
				for n := 1; ; n++ {
					msg, err := s.Act(context.Background(), hist)
					if err != nil {
						errs.Add(1)
						break
					}
					var r TurnResponse
					t0 := time.Now()
					st := call(b, c, "POST", ts.URL+"/v1/episodes/"+cr.ID+"/turns", "", TurnRequest{Message: msg}, &r)
					mine = append(mine, time.Since(t0))
					if st != 200 || r.Info.Turn != n {
						errs.Add(1)
						break
					}
					turns.Add(1)
					hist = append(hist, dialog.Message{Role: dialog.RoleAssistant, Content: msg})
					if r.Reply != "" {
						hist = append(hist, dialog.Message{Role: dialog.RoleUser, Content: r.Reply})
					}
					if r.Done {
						break
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if errs.Load() != 0 {
		b.Fatalf("got %d errors", errs.Load())
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(turns.Load())/elapsed.Seconds(), "turns/s")
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(turns.Load())/float64(b.N), "turns/episode")
}
