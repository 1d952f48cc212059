package reproduce

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/runfolder"
)

// The profile gives each stage its wall time and shares the process's CPU
// time out between the stages running when it was spent: a stage alone
// gets all of it, two side by side half each. It is written as each stage
// ends, and a profile opened again (a resumed run) keeps what it holds.
func TestProfileSharesCPUBetweenStagesSideBySide(t *testing.T) {
	f, err := runfolder.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wall, cpu time.Duration
	p := openProfile(f)
	p.now = func() time.Time { return time.Unix(0, 0).Add(wall) }
	p.cpu = func() time.Duration { return cpu }
	step := func(w, c time.Duration) { wall += w; cpu += c }

	step(time.Second, 5*time.Second) // before any stage: nobody's
	p.begin("a")
	step(2*time.Second, 2*time.Second) // a alone: 2 s
	p.begin("b")
	step(4*time.Second, 8*time.Second) // a and b: 4 s each
	if err := p.end("a"); err != nil {
		t.Fatal(err)
	}
	step(time.Second, time.Second) // b alone: 1 s
	if err := p.end("b"); err != nil {
		t.Fatal(err)
	}
	var got []StageTime
	if err := f.ReadJSON(profileFile, &got); err != nil {
		t.Fatal(err)
	}
	want := []StageTime{{Stage: "a", WallS: 6, CPUS: 6, Beside: 1}, {Stage: "b", WallS: 5, CPUS: 5, Beside: 1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("profile %+v, want %+v", got, want)
	}
	table, err := os.ReadFile(f.Path(profileTable))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"| a | 6.0 | 6.0 | 1.00 | 1 |", "| b | 5.0 | 5.0 | 1.00 | 1 |", "| **all 2 stages** | 11.0 | 11.0 | | |"} {
		if !strings.Contains(string(table), line+"\n") {
			t.Errorf("%s lacks %q:\n%s", profileTable, line, table)
		}
	}
	// Opened again, a stage run again replaces its own line only.
	q := openProfile(f)
	q.now, q.cpu = p.now, p.cpu
	q.begin("b")
	step(3*time.Second, 3*time.Second)
	if err := q.end("b"); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := f.ReadJSON(profileFile, &got); err != nil {
		t.Fatal(err)
	}
	want[1] = StageTime{Stage: "b", WallS: 3, CPUS: 3}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("profile after a rerun %+v, want %+v", got, want)
	}
}
