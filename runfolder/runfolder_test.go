package runfolder

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestFolderStagesManifestMetrics(t *testing.T) {
	f, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if f.Done("collect") {
		t.Fatal("fresh folder: collect already done")
	}
	if err := f.MarkDone("collect"); err != nil {
		t.Fatal(err)
	}
	if !f.Done("collect") {
		t.Fatal("collect not done after MarkDone")
	}
	if err := f.MarkDone("eval/static/seed-0"); err != nil || !f.Done("eval/static/seed-0") {
		t.Fatalf("a stage named with folders: MarkDone %v, done %v", err, f.Done("eval/static/seed-0"))
	}
	before := time.Now().Add(-time.Second)
	if err := f.WriteManifest(Manifest{Command: []string{"reproduce"}, Seed: 3, Config: map[string]int{"g": 8}}); err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := f.ReadJSON("manifest.json", &m); err != nil || m.Seed != 3 || m.Version == "" {
		t.Fatalf("manifest round trip: %+v, %v", m, err)
	}
	if m.Started.Before(before) || m.Started.After(time.Now()) {
		t.Fatalf("manifest started %v, want the time it was written (after %v)", m.Started, before)
	}
	for i := 0; i < 3; i++ {
		if err := f.Log(map[string]any{"step": i, "loss/policy": 0.5}); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	// A torn last line, as an interruption mid-write leaves.
	file, _ := os.OpenFile(f.Path("metrics.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	file.WriteString(`{"step": 3, "loss/pol`)
	file.Close()
	recs, err := f.ReadMetrics()
	if err != nil || len(recs) != 3 {
		t.Fatalf("got %d records (%v), want 3", len(recs), err)
	}
	if recs[2]["step"].(float64) != 2 {
		t.Fatalf("last record %v", recs[2])
	}
	// A resumed run appends after cutting the torn line.
	if err := f.Log(map[string]any{"step": 3}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, err = f.ReadMetrics()
	if err != nil || len(recs) != 4 || recs[3]["step"].(float64) != 3 {
		t.Fatalf("after resume: %d records, %v", len(recs), err)
	}
}

func TestOpenRemovesLeftoversOfKilledWriters(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	// Leftovers at the top, in a stage's sub-folder and in a nested run
	// folder (a temporary folder with a file in it); before, only the top
	// folder and stages/ were swept.
	stales := []string{
		filepath.Join(dir, ".manifest.json.tmp-"+dead+"-1"),
		filepath.Join(dir, "eval", "static", ".seed-0.episodes.jsonl.tmp-"+dead+"-3"),
		filepath.Join(dir, "h4", "checkpoints", ".base.tmp-"+dead+"-4", "model.safetensors"),
	}
	live := filepath.Join(dir, ".metrics.tmp-"+strconv.Itoa(os.Getpid())+"-2")
	for _, p := range append(stales, live) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	for _, stale := range stales {
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Errorf("a killed writer's temporary survived Open: %s", stale)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "h4", "checkpoints")); err != nil {
		t.Error("Open removed a folder that is no temporary")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("Open removed a live writer's temporary")
	}
}
