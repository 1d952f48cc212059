// Package runfolder lays out a run's folder and keeps it resumable:
//
//	runs/<name>/manifest.json    command, config, seeds, version
//	runs/<name>/metrics.jsonl    one JSON object per logged step
//	runs/<name>/stages/<stage>   a marker per finished stage
//	runs/<name>/...              episodes, checkpoints, report, plots
//
// Every file but metrics.jsonl is written atomically. metrics.jsonl is
// appended line by line and synced, so an interrupted run loses at most the
// line being written, which a resumed run skips over.
package runfolder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/calibrl/calibrl/atomicfile"
)

// Folder is one run's folder.
type Folder struct {
	Dir string

	mu      sync.Mutex
	metrics *os.File
	// lock is the key of the writer's lock Open took (lock.go); "" for
	// a Folder made without Open, which only reads.
	lock string
}

// Open creates dir if needed, takes its writer's lock and returns its
// folder: a folder another process has open is refused (ErrLocked, naming
// its pid), until that process closes it or dies. Temporaries that
// writers killed in an earlier run left anywhere in it
// (atomicfile.CleanTree: the stages' sub-folders, nested run folders) are
// removed. Close gives the lock back.
func Open(dir string) (*Folder, error) {
	if dir == "" {
		return nil, errors.New("run folder: no path")
	}
	if err := os.MkdirAll(filepath.Join(dir, "stages"), 0o755); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	key, err := acquire(dir)
	if err != nil {
		return nil, err
	}
	removed, err := atomicfile.CleanTree(dir)
	if err != nil {
		release(key)
		return nil, fmt.Errorf("run folder: %w", err)
	}
	if len(removed) > 0 {
		slog.Info("removed leftovers of an interrupted run", "dir", dir, "names", removed)
	}
	return &Folder{Dir: dir, lock: key}, nil
}

// Path joins elem under the folder.
func (f *Folder) Path(elem ...string) string {
	return filepath.Join(append([]string{f.Dir}, elem...)...)
}

// Manifest records what produced a run.
type Manifest struct {
	Command []string  `json:"command"`
	Config  any       `json:"config"`
	Seed    uint64    `json:"seed"`
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Earlier are the commands of the runs a later one extended (each
	// with what it added, e.g. reproduce's arms of another optimizer),
	// oldest first; Command, with Config, makes the whole folder.
	Earlier [][]string `json:"earlier_commands,omitempty"`
}

// Version is the module version and VCS revision baked into the binary, or
// "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			v += "+" + s.Value
		}
	}
	return v
}

// WriteManifest writes manifest.json. A run writes it once, when it starts
// the folder (a resumed run keeps it), so Started, when the caller leaves
// it zero, is now: the time the folder was started.
func (f *Folder) WriteManifest(m Manifest) error {
	if m.Version == "" {
		m.Version = Version()
	}
	if m.Started.IsZero() {
		m.Started = time.Now().UTC().Truncate(time.Second)
	}
	return f.WriteJSON("manifest.json", m)
}

// WriteJSON writes v, indented, to a file under the folder atomically.
func (f *Folder) WriteJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return atomicfile.WriteBytes(f.Path(name), append(data, '\n'))
}

// ReadJSON reads a file under the folder into v.
func (f *Folder) ReadJSON(name string, v any) error {
	data, err := os.ReadFile(f.Path(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", f.Path(name), err)
	}
	return nil
}

// Done reports whether stage has finished in an earlier run.
func (f *Folder) Done(stage string) bool {
	_, err := os.Stat(f.Path("stages", stage))
	return err == nil
}

// MarkDone records that stage finished. A stage's name may have folders
// ("eval/static/seed-0"): its marker's folder is made as needed.
func (f *Folder) MarkDone(stage string) error {
	path := f.Path("stages", stage)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("run folder: %w", err)
	}
	return atomicfile.WriteBytes(path, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"))
}

// Undo forgets that stage finished, so that it runs again.
func (f *Folder) Undo(stage string) error {
	if err := os.Remove(f.Path("stages", stage)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("run folder: %w", err)
	}
	return nil
}

// Log appends one metrics record to metrics.jsonl. Records are flat maps
// with namespaced keys ("loss/policy", "rollout/reward_mean").
func (f *Folder) Log(record map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.metrics == nil {
		if err := dropTornTail(f.Path("metrics.jsonl")); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		file, err := os.OpenFile(f.Path("metrics.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		f.metrics = file
	}
	line, err := json.Marshal(record)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if _, err := f.metrics.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return f.metrics.Sync()
}

// Rewind keeps the first keep records of metrics.jsonl that carry
// "stage": stage and drops that stage's later ones, leaving every other
// stage's records as they are, byte for byte and in order. A stage
// resumed from a checkpoint redoes the work its killed run did after the
// checkpoint; the records of that work go, so that the log ends as an
// uninterrupted run's would (train.MetricRecords). The file is replaced
// atomically; a torn last line goes too.
func (f *Folder) Rewind(stage string, keep int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := f.Path("metrics.jsonl")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	var out []byte
	seen, dropped := 0, 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			dropped++ // torn last line
			break
		}
		line := data[:i+1]
		data = data[i+1:]
		var rec struct {
			Stage string `json:"stage"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Stage == stage {
			if seen++; seen > keep {
				dropped++
				continue
			}
		}
		out = append(out, line...)
	}
	if dropped == 0 {
		return nil
	}
	// Appends after this go to the new file, not the replaced one.
	if f.metrics != nil {
		f.metrics.Close()
		f.metrics = nil
	}
	if err := atomicfile.WriteBytes(path, out); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	slog.Info("metrics: dropped the records of work redone since the checkpoint", "stage", stage, "kept", keep, "dropped", dropped)
	return nil
}

// Close closes the metrics file and gives back the lock Open took.
// Calling it again is harmless.
func (f *Folder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.metrics != nil {
		err = f.metrics.Close()
		f.metrics = nil
	}
	if f.lock != "" {
		if lerr := release(f.lock); err == nil {
			err = lerr
		}
		f.lock = ""
	}
	return err
}

// ReadMetrics returns the records of metrics.jsonl, skipping a torn last
// line left by an interruption.
func (f *Folder) ReadMetrics() ([]map[string]any, error) {
	data, err := os.ReadFile(f.Path("metrics.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	start := 0
	for i := 0; i <= len(data); i++ {
		if i < len(data) && data[i] != '\n' {
			continue
		}
		line := data[start:i]
		start = i + 1
		if len(line) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			if i >= len(data)-1 {
				break // torn last line
			}
			return nil, fmt.Errorf("%s: %w", f.Path("metrics.jsonl"), err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// dropTornTail cuts a partial last line (no final newline) that an
// interrupted run left, so appended records start on a line of their own.
func dropTornTail(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || len(data) == 0 || data[len(data)-1] == '\n' {
		return nil
	}
	if err != nil {
		return err
	}
	keep := bytes.LastIndexByte(data, '\n') + 1
	return os.Truncate(path, int64(keep))
}
