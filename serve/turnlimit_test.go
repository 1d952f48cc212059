package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/task/level"
)

// An episode created without max_turns plays its task level's turn limit
// (N at hN, else level.DefaultMaxTurns), the one collect, eval and
// fidelity play; --max-turns, when set, is every episode's limit and
// bound.
func TestTurnLimitDefaultIsTheTaskLevels(t *testing.T) {
	for _, c := range []struct {
		flag, ask int
		task      string
		want      int
	}{
		{0, 0, "mathchat:easy", level.DefaultMaxTurns},
		{0, 0, "mathchat:h4", 4},
		{0, 0, "support:h16", 16},
		{0, 3, "mathchat:h4", 3},
		{7, 0, "mathchat:h4", 7},
		{7, 0, "support", 7},
	} {
		cfg := DefaultConfig()
		cfg.MaxTurns = c.flag
		s, err := New(cfg, Options{Task: task.Lookup})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(s.Handler())
		idx := 1
		var cr CreateResponse
		if code := call(t, ts.Client(), "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: c.task, Index: &idx, MaxTurns: c.ask}, &cr); code != http.StatusCreated {
			t.Fatalf("--max-turns %d, create %s: status %d", c.flag, c.task, code)
		}
		var tr Transcript
		call(t, ts.Client(), "GET", ts.URL+"/v1/episodes/"+cr.ID, "", nil, &tr)
		if tr.MaxTurns != c.want {
			t.Errorf("--max-turns %d, %s asking %d: episode max_turns %d, want %d", c.flag, c.task, c.ask, tr.MaxTurns, c.want)
		}
		// The limit bounds what a request may ask.
		if code := call(t, ts.Client(), "POST", ts.URL+"/v1/episodes", "", CreateRequest{Task: c.task, Index: &idx, MaxTurns: tr.MaxTurns + 1}, nil); c.ask == 0 && code != http.StatusBadRequest {
			t.Errorf("--max-turns %d, %s asking %d: status %d, want 400", c.flag, c.task, tr.MaxTurns+1, code)
		}
		ts.Close()
	}
}
