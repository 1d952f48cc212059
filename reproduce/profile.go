package reproduce

// The stage profile: each stage's wall and CPU seconds, written to the run
// folder's stages.json (and stages.md, the same as a table) as each stage
// ends, so that a run's costs are read from the run, not guessed. The
// process's CPU time (processCPU) is shared out between the stages
// running when it was spent, equally: exact for a stage that ran alone,
// an even split for stages side by side (their threads are not told
// apart). A resumed run keeps the times of the stages done before.

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/runfolder"
)

// profileFile and profileTable are the stage profile's files in a run
// folder.
const (
	profileFile  = "stages.json"
	profileTable = "stages.md"
)

// StageTime is one stage's cost in a run.
type StageTime struct {
	Stage string `json:"stage"`
	// WallS is the stage's wall time in seconds.
	WallS float64 `json:"wall_s"`
	// CPUS is the process's CPU seconds (user and system) while the stage
	// ran, split equally with the stages running beside it.
	CPUS float64 `json:"cpu_s"`
	// Beside is the most stages that ran beside it at one time.
	Beside int `json:"beside"`
}

// profile times the stages of one run folder.
type profile struct {
	mu      sync.Mutex
	f       *runfolder.Folder
	now     func() time.Time
	cpu     func() time.Duration
	lastCPU time.Duration
	running map[string]*runningStage
	times   []StageTime
}

type runningStage struct {
	started time.Time
	cpu     time.Duration
	beside  int
}

// openProfile reads f's profile so far (none in a fresh run).
func openProfile(f *runfolder.Folder) *profile {
	p := &profile{f: f, now: time.Now, cpu: processCPU, running: map[string]*runningStage{}}
	_ = f.ReadJSON(profileFile, &p.times) // a fresh run has none; a damaged one starts again
	return p
}

// share adds the CPU time spent since the last call to the running
// stages, equally.
func (p *profile) share() {
	now := p.cpu()
	if n := len(p.running); n > 0 {
		for _, s := range p.running {
			s.cpu += (now - p.lastCPU) / time.Duration(n)
		}
	}
	p.lastCPU = now
}

// begin starts timing stage name.
func (p *profile) begin(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.share()
	p.running[name] = &runningStage{started: p.now()}
	for _, s := range p.running {
		s.beside = max(s.beside, len(p.running)-1)
	}
}

// end stops timing stage name and writes the profile.
func (p *profile) end(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.share()
	s, ok := p.running[name]
	if !ok {
		return fmt.Errorf("reproduce: stage profile: %s never began", name)
	}
	delete(p.running, name)
	t := StageTime{Stage: name, WallS: round3(p.now().Sub(s.started).Seconds()), CPUS: round3(s.cpu.Seconds()), Beside: s.beside}
	if i := slices.IndexFunc(p.times, func(x StageTime) bool { return x.Stage == name }); i >= 0 {
		p.times[i] = t // a stage run again (the report of a resumed run)
	} else {
		p.times = append(p.times, t)
	}
	if err := p.f.WriteJSON(profileFile, p.times); err != nil {
		return err
	}
	return atomicfile.Write(p.f.Path(profileTable), func(w io.Writer) error { return writeProfile(w, p.times) })
}

// drop forgets a stage that failed: it wrote no result, so it has no cost
// worth reporting.
func (p *profile) drop(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.share()
	delete(p.running, name)
}

// writeProfile writes times as a markdown table, in the order the stages
// ended, with the totals.
func writeProfile(w io.Writer, times []StageTime) error {
	var wall, cpu float64
	if _, err := fmt.Fprintf(w, "# Stage profile\n\nWall and CPU seconds of each stage, in the order they ended. CPU is the process's user and system time while the stage ran, split equally with the stages beside it (\"beside\": the most that ran at once with it). The wall total counts stages side by side twice; the run's own wall time is less.\n\n| stage | wall s | CPU s | CPU/wall | beside |\n| --- | ---: | ---: | ---: | ---: |\n"); err != nil {
		return err
	}
	for _, t := range times {
		wall += t.WallS
		cpu += t.CPUS
		ratio := "–"
		if t.WallS > 0 {
			ratio = fmt.Sprintf("%.2f", t.CPUS/t.WallS)
		}
		if _, err := fmt.Fprintf(w, "| %s | %.1f | %.1f | %s | %d |\n", t.Stage, t.WallS, t.CPUS, ratio, t.Beside); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "| **all %d stages** | %.1f | %.1f | | |\n", len(times), wall, cpu)
	return err
}

// round3 keeps milliseconds: the profile's precision, without float noise.
func round3(s float64) float64 { return math.Round(s*1e3) / 1e3 }
