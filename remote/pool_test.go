package remote

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/secretenv"
)

func hello() Request {
	return Request{Messages: []dialog.Message{{Role: dialog.RoleUser, Content: "hi"}}}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name         string
		statuses     []int // per call; past the end: 200
		wantErr      bool
		wantAttempts int64
		wantRetries  int64
	}{
		{"429 then 200", []int{429}, false, 2, 1},
		{"503 twice then 200", []int{503, 500}, false, 3, 2},
		{"500 every time", []int{500, 500, 500, 500, 500}, true, 3, 2},
		{"400 is not retried", []int{400}, true, 1, 0},
		{"401 is not retried", []int{401}, true, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(n int, _ map[string]any) fakeReply {
				if n < len(tt.statuses) {
					return fakeReply{status: tt.statuses[n]}
				}
				return fakeReply{text: "ok"}
			})
			p := testPool(t, testConfig(f))
			resp, err := p.Complete(context.Background(), hello())
			if (err != nil) != tt.wantErr {
				t.Fatalf("got err %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && resp.Text != "ok" {
				t.Errorf("got text %q, want ok", resp.Text)
			}
			s := p.Stats()
			if s.Attempts != tt.wantAttempts || s.Retries != tt.wantRetries || s.Requests != 1 {
				t.Errorf("got stats %+v, want attempts %d retries %d requests 1", s, tt.wantAttempts, tt.wantRetries)
			}
			wantErrs := int64(0)
			if tt.wantErr {
				wantErrs = 1
			}
			if s.Errors != wantErrs {
				t.Errorf("got errors %d, want %d", s.Errors, wantErrs)
			}
			if !tt.wantErr && (s.PromptTokens != 10 || s.CompletionTokens != 3) {
				t.Errorf("got tokens %d/%d, want 10/3", s.PromptTokens, s.CompletionTokens)
			}
		})
	}
}

func TestTimeoutRetriedThenBounded(t *testing.T) {
	// First attempt outlasts the endpoint's timeout, the second answers.
	f := newFake(t, func(n int, _ map[string]any) fakeReply {
		if n == 0 {
			return fakeReply{hang: true}
		}
		return fakeReply{text: "late but fine"}
	})
	cfg := testConfig(f)
	cfg.Endpoints[0].Timeout = Duration(50 * time.Millisecond)
	p := testPool(t, cfg)
	resp, err := p.Complete(context.Background(), hello())
	if err != nil || resp.Text != "late but fine" {
		t.Fatalf("got %q, %v; want the second attempt's reply", resp.Text, err)
	}
	if s := p.Stats(); s.Retries != 1 {
		t.Errorf("got %d retries, want 1", s.Retries)
	}

	// A server that never answers fails after MaxAttempts timeouts.
	g := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{hang: true} })
	cfg = testConfig(g)
	cfg.Endpoints[0].Timeout = Duration(20 * time.Millisecond)
	p = testPool(t, cfg)
	if _, err := p.Complete(context.Background(), hello()); err == nil {
		t.Fatal("got no error from a server that never answers")
	}
	if got := g.calls.Load(); got != 3 {
		t.Errorf("got %d calls, want 3 (MaxAttempts)", got)
	}
}

func TestCancellation(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{hang: true} })
	p := testPool(t, testConfig(f))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Complete(ctx, hello())
		done <- err
	}()
	for f.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Complete did not return after cancel")
	}
	if got := f.calls.Load(); got != 1 {
		t.Errorf("got %d calls, want 1 (no retry after cancel)", got)
	}
}

func TestFanOutAndConcurrencyBound(t *testing.T) {
	slow := func(int, map[string]any) fakeReply { return fakeReply{text: "x", delay: 20 * time.Millisecond} }
	a, b := newFake(t, slow), newFake(t, slow)
	cfg := testConfig(a, b)
	cfg.Endpoints[0].MaxConcurrency = 2
	cfg.Endpoints[1].MaxConcurrency = 3
	p := testPool(t, cfg)
	var wg sync.WaitGroup
	const n = 30
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Complete(context.Background(), hello()); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ca, cb := a.calls.Load(), b.calls.Load()
	if ca+cb != n || ca == 0 || cb == 0 {
		t.Errorf("got calls %d+%d, want %d spread over both endpoints", ca, cb, n)
	}
	if m := a.maxIn.Load(); m > 2 {
		t.Errorf("endpoint 0 had %d requests in flight, want at most 2", m)
	}
	if m := b.maxIn.Load(); m > 3 {
		t.Errorf("endpoint 1 had %d requests in flight, want at most 3", m)
	}
}

func TestRequestFieldsAndKeys(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{text: "ok"} })
	t.Setenv("OPENAI_API_KEY", "sk-from-environment-must-not-leak")
	t.Setenv("CALIBRL_TEST_KEY", "sk-test-secret")

	// No key variable named: no Authorization header, whatever the
	// environment holds.
	p := testPool(t, testConfig(f))
	seed := int64(42)
	if _, err := p.Complete(context.Background(), Request{Messages: hello().Messages, Seed: &seed, JSON: true}); err != nil {
		t.Fatal(err)
	}
	body := f.body(0)
	if body["model"] != "m" || body["seed"] != float64(42) {
		t.Errorf("got model %v seed %v, want m 42", body["model"], body["seed"])
	}
	if rf, _ := body["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("got response_format %v, want json_object", body["response_format"])
	}
	if got := f.auth[0]; got != "" {
		t.Errorf("got Authorization %q, want none", got)
	}

	cfg := testConfig(f)
	cfg.Endpoints[0].APIKeyEnv = "CALIBRL_TEST_KEY"
	p = testPool(t, cfg)
	if _, err := p.Complete(context.Background(), hello()); err != nil {
		t.Fatal(err)
	}
	if got := f.auth[1]; got != "Bearer sk-test-secret" {
		t.Errorf("got Authorization %q, want the key from CALIBRL_TEST_KEY", got)
	}

	cfg.Endpoints[0].APIKeyEnv = "CALIBRL_TEST_UNSET_KEY"
	// An unset name is not repeated: it may be a short key pasted where
	// its variable's name belongs (secretenv.ErrNotSet).
	if _, err := NewPool(cfg, "m", nil); !errors.Is(err, secretenv.ErrNotSet) || strings.Contains(err.Error(), "CALIBRL_TEST_UNSET_KEY") {
		t.Errorf("got %v, want secretenv.ErrNotSet, not showing the name given", err)
	}
}

func TestErrorsDoNotCarryKey(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{status: 401} })
	t.Setenv("CALIBRL_TEST_KEY", "sk-test-secret-xyz")
	cfg := testConfig(f)
	cfg.Endpoints[0].APIKeyEnv = "CALIBRL_TEST_KEY"
	p := testPool(t, cfg)
	_, err := p.Complete(context.Background(), hello())
	if err == nil {
		t.Fatal("got no error for 401")
	}
	if strings.Contains(err.Error(), "sk-test-secret-xyz") {
		t.Errorf("error carries the API key: %v", err)
	}
}

func TestNoEndpointForModel(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{text: "ok"} })
	if _, err := NewPool(testConfig(f), "other", nil); err == nil {
		t.Error("got a pool for a model no endpoint serves")
	}
}
