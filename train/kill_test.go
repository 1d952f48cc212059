package train

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/lm"
)

// The kill -9 test: a training run is killed with SIGKILL at random
// moments, and at moments when a checkpoint is being written, and started
// again on the same folder until it finishes. It must end bit-identical to
// an uninterrupted run: same final weights, same result figures (all but
// the timing), and no temporaries left behind.
//
// The runs are this test binary re-executed (TestKillChild), so a kill
// stops the process exactly where it is, with no deferred cleanup.

const killChildEnv = "CALIBRL_KILL_CHILD" // "sft:OUT" or "grpo:INIT:OUT"

func killSFTConfig() SFTConfig {
	c := smallSFT()
	c.Steps, c.EvalEvery, c.CheckpointEvery = 300, 10, 3
	return c
}

func killGRPOConfig() RLConfig {
	c := smallGRPO()
	c.Iterations, c.MonitorEvery, c.CheckpointEvery = 30, 4, 1
	return c
}

// TestKillChild is one run of the kill test; it does nothing unless the
// kill test started it.
func TestKillChild(t *testing.T) {
	spec := os.Getenv(killChildEnv)
	if spec == "" {
		t.Skip("run by TestKillNineResumesBitIdentical")
	}
	parts := strings.Split(spec, ":")
	var err error
	switch parts[0] {
	case "sft":
		m, seqs := toySFT(t)
		_, err = SFT(context.Background(), m, seqs, killSFTConfig(), parts[1], nil)
	case "grpo":
		var m *chatlm.Model
		if m, _, err = chatlm.Load(parts[1]); err == nil {
			_, err = GRPO(context.Background(), m, addTask{}, addUser{}, addUser{}, killGRPOConfig(), parts[2], nil)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

type killStats struct{ kills, inWrite int }

// runKilled runs the child spec to completion, killing it up to maxKills
// times, each after a random delay up to span: every other kill at that
// moment, the others at the first moment after it when a checkpoint
// folder is being staged beside out/last.
func runKilled(t *testing.T, spec, out string, maxKills int, span time.Duration, rng *rand.Rand) killStats {
	t.Helper()
	var st killStats
	for attempt := 0; ; attempt++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+spec)
		var output bytes.Buffer
		cmd.Stdout, cmd.Stderr = &output, &output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if st.kills >= maxKills {
			if err := <-done; err != nil {
				t.Fatalf("final run: %v\n%s", err, output.String())
			}
			return st
		}
		var killed, inWrite bool
		timer := time.NewTimer(time.Duration(rng.Int64N(int64(span))))
		select {
		case err := <-done:
			timer.Stop()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, output.String())
			}
			return st
		case <-timer.C:
		}
		if attempt%2 == 0 {
			cmd.Process.Kill()
			killed = true
		} else {
			// Poll for a staging folder; kill the moment one exists.
		poll:
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("run: %v\n%s", err, output.String())
					}
					return st
				default:
				}
				if staging(t, out) {
					cmd.Process.Kill()
					killed, inWrite = true, true
					break poll
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		if err := <-done; killed && err == nil {
			return st // it finished before the signal landed
		}
		st.kills++
		if inWrite {
			st.inWrite++
		}
	}
}

// staging reports whether a checkpoint write is under way in out.
func staging(t *testing.T, out string) bool {
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".last.tmp-") {
			return true
		}
	}
	return false
}

// leftovers lists temporary names under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") || strings.HasSuffix(d.Name(), ".old") {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// resultFigures reads a result file without its timing.
func resultFigures(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "tokens_per_s")
	return m
}

func TestKillNineResumesBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts training processes (about 20 s)")
	}
	if os.Getenv(killChildEnv) != "" {
		t.Skip("inside a child")
	}
	root := t.TempDir()
	initDir := filepath.Join(root, "init")
	if err := toyPolicy(t, 80).Save(initDir, nil); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	total := killStats{}
	for _, run := range []struct {
		name, result string
		spec         func(out string) string
		kills        int
	}{
		{"sft", "sft_result.json", func(out string) string { return "sft:" + out }, 14},
		{"grpo", "grpo_result.json", func(out string) string { return "grpo:" + initDir + ":" + out }, 14},
	} {
		ref, killed := filepath.Join(root, run.name+"-ref"), filepath.Join(root, run.name+"-killed")
		start := time.Now()
		runKilled(t, run.spec(ref), ref, 0, time.Second, rng)
		span := time.Since(start) / 12
		st := runKilled(t, run.spec(killed), killed, run.kills, span, rng)
		total.kills += st.kills
		total.inWrite += st.inWrite
		t.Logf("%s: uninterrupted run %v; %d kills, %d of them during a checkpoint write", run.name, 12*span, st.kills, st.inWrite)
		want, err := os.ReadFile(filepath.Join(ref, lm.WeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(killed, lm.WeightsFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: after %d kills the final weights differ from the uninterrupted run's", run.name, st.kills)
		}
		if a, b := resultFigures(t, filepath.Join(ref, run.result)), resultFigures(t, filepath.Join(killed, run.result)); !equalJSON(a, b) {
			t.Errorf("%s: result after kills %v, uninterrupted %v", run.name, b, a)
		}
		if left := leftovers(t, killed); len(left) > 0 {
			t.Errorf("%s: temporaries left behind: %v", run.name, left)
		}
	}
	t.Logf("total: %d kills, %d during checkpoint writes", total.kills, total.inWrite)
	if total.kills < 25 || total.inWrite < 5 {
		t.Errorf("only %d kills (%d during writes): the runs finished too fast to test much", total.kills, total.inWrite)
	}
}

func equalJSON(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
