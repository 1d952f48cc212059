package lm

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A config.json whose sizes pass the bounds but describe a model far larger
// than its weights file is refused from the file's header, before the
// model (here 1.2e9 parameters, ~10 GB with gradients) is allocated.
func TestLoadRefusesHugeConfigBeforeAllocating(t *testing.T) {
	m, _ := trainedTiny(t, false)
	dir := t.TempDir()
	if err := SaveCheckpoint(dir, Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, ManifestFile)) // a hand-edited folder
	editConfig(t, dir, `"vocab_size": 11`, `"vocab_size": 100000`)
	editConfig(t, dir, `"n_embd": 8`, `"n_embd": 4096`)
	editConfig(t, dir, `"n_layer": 2`, `"n_layer": 4`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadCheckpoint(dir)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "model.safetensors: tensor wte.weight has shape [11 8], config wants [100000 4096]") {
		t.Errorf("got %v, want the weights' shape named against the config", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("refusing the config allocated %d MB", got>>20)
	}
}

func TestLoadRefusesAbsurdConfig(t *testing.T) {
	m, _ := trainedTiny(t, false)
	for _, tc := range []struct{ old, new, want string }{
		{`"n_embd": 8`, `"n_embd": 65536`, "config.json: lm config: n_embd 65536, want ≤ 16384"},
		{`"n_layer": 2`, `"n_layer": 100000000`, "config.json: lm config: n_layer 100000000, want ≤ 1024"},
		{`"vocab_size": 11`, `"vocab_size": 2000000000`, "config.json: lm config: vocab_size 2000000000, want ≤ 1048576"},
		{`"n_positions": 8`, `"n_positions": -3`, "n_positions -3, want ≥ 2"},
	} {
		dir := t.TempDir()
		if err := SaveCheckpoint(dir, Checkpoint{Model: m}); err != nil {
			t.Fatal(err)
		}
		editConfig(t, dir, tc.old, tc.new)
		if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.new, err, tc.want)
		}
	}
}

// poison overwrites values lo..hi-1 of a saved tensors file with NaN.
func poison(t *testing.T, path string, lo, hi int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := 8 + int(binary.LittleEndian.Uint64(b))
	for i := lo; i < hi; i++ {
		binary.LittleEndian.PutUint32(b[data+4*i:], math.Float32bits(float32(math.NaN())))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRefusesNonFiniteWeights(t *testing.T) {
	m, opt := trainedTiny(t, false)
	for _, withManifest := range []bool{true, false} {
		dir := t.TempDir()
		if err := SaveCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt}); err != nil {
			t.Fatal(err)
		}
		if !withManifest {
			os.Remove(filepath.Join(dir, ManifestFile))
		}
		poison(t, filepath.Join(dir, WeightsFile), 0, m.Config.NumParams())
		_, err := LoadCheckpoint(dir)
		if err == nil || !strings.Contains(err.Error(), "model.safetensors: tensor wte.weight holds 88 non-finite values (the first, NaN, at index 0)") {
			t.Errorf("manifest %v: got %v, want all-NaN weights refused, naming file and tensor", withManifest, err)
		}
	}
	// A NaN moment is refused too: it would turn the next update into NaN.
	dir := t.TempDir()
	if err := SaveCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt}); err != nil {
		t.Fatal(err)
	}
	poison(t, filepath.Join(dir, OptimizerFile), 100, 101)
	if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), "optimizer.safetensors: tensor exp_avg.wpe.weight holds 1 non-finite values (the first, NaN, at index 12)") {
		t.Errorf("NaN moment: got %v", err)
	}
}

func TestSaveRefusesNonFiniteWeights(t *testing.T) {
	m, _ := trainedTiny(t, false)
	dir := t.TempDir()
	if err := SaveCheckpoint(dir, Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, WeightsFile))
	m.Params.LNFW[1] = float32(math.Inf(1))
	err := SaveCheckpoint(dir, Checkpoint{Model: m})
	if err == nil || !strings.Contains(err.Error(), "tensor ln_f.weight holds 1 non-finite values (the first, +Inf, at index 1)") {
		t.Errorf("got %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, WeightsFile)); string(now) != string(good) {
		t.Error("a refused save changed the checkpoint on disk")
	}
}

// Files of two saves never load as one checkpoint.
func TestLoadRefusesMixedCheckpoint(t *testing.T) {
	m, opt := trainedTiny(t, false)
	a, b := t.TempDir(), t.TempDir()
	state := func(step string) map[string][]byte {
		return map[string][]byte{"trainer_state.json": []byte(`{"step":` + step + `}`)}
	}
	if err := ReplaceCheckpoint(filepath.Join(a, "last"), Checkpoint{Model: m, Optimizer: opt, Files: state("112")}); err != nil {
		t.Fatal(err)
	}
	m.Params.WTE[0] += 1 // a later save
	opt.Step++
	if err := ReplaceCheckpoint(filepath.Join(b, "last"), Checkpoint{Model: m, Optimizer: opt, Files: state("138")}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{WeightsFile, OptimizerFile, "trainer_state.json"} {
		dir := t.TempDir()
		for _, f := range []string{ConfigFile, WeightsFile, OptimizerFile, "trainer_state.json", ManifestFile} {
			copyFile(t, filepath.Join(a, "last", f), filepath.Join(dir, f))
		}
		copyFile(t, filepath.Join(b, "last", name), filepath.Join(dir, name))
		_, err := LoadCheckpoint(dir)
		if err == nil || !strings.Contains(err.Error(), name+" does not match checkpoint.json") {
			t.Errorf("%s of a later save: got %v, want it refused", name, err)
		}
	}
}

func TestReplaceCheckpointRoundTrip(t *testing.T) {
	m, opt := trainedTiny(t, true)
	best := slices.Clone(m.Params.Data)
	best[3] = 0.25
	dir := filepath.Join(t.TempDir(), "last")
	files := map[string][]byte{"trainer_state.json": []byte(`{"step":3}`)}
	if err := ReplaceCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt, Tokenizer: []byte("{}"), Weights: map[string][]float32{"best": best}, Files: files}); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if i := sameBits(ck.Model.Params.Data, m.Params.Data); i >= 0 {
		t.Errorf("weight %d differs", i)
	}
	if i := sameBits(ck.Weights["best"], best); i >= 0 || len(ck.Weights) != 1 {
		t.Errorf("best weights: %d of %d sets, value %d differs", len(ck.Weights), 1, i)
	}
	if string(ck.Files["trainer_state.json"]) != `{"step":3}` || ck.Optimizer == nil || string(ck.Tokenizer) != "{}" {
		t.Errorf("got files %q, optimizer %v, tokenizer %q", ck.Files, ck.Optimizer != nil, ck.Tokenizer)
	}
	// A second save without the optimizer replaces the folder whole.
	if err := ReplaceCheckpoint(dir, Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, OptimizerFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous save's optimizer is still there: %v", err)
	}
	for _, bad := range []string{"../x", ".hidden", ConfigFile, "x.safetensors"} {
		if err := ReplaceCheckpoint(dir, Checkpoint{Model: m, Files: map[string][]byte{bad: nil}}); err == nil {
			t.Errorf("file name %q accepted", bad)
		}
	}
}

// SaveCheckpoint in place drops the files a previous save had and this one
// does not, and leaves the folder's other files alone.
func TestSaveCheckpointInPlaceDropsStaleParts(t *testing.T) {
	m, opt := trainedTiny(t, false)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte("{}\n"), 0o644)
	if err := SaveCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt, Files: map[string][]byte{"state.json": []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	if err := SaveCheckpoint(dir, Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Optimizer != nil || ck.Files != nil {
		t.Errorf("stale parts loaded: optimizer %v, files %q", ck.Optimizer != nil, ck.Files)
	}
	for _, gone := range []string{OptimizerFile, "state.json"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); err != nil {
		t.Errorf("a file that is not the checkpoint's was touched: %v", err)
	}
}

func TestUpdateRefusesNonFiniteGradient(t *testing.T) {
	m, opt := trainedTiny(t, false)
	before, moments, step := slices.Clone(m.Params.Data), slices.Clone(opt.M.Data), opt.Step
	m.Grads.Layer(1).FCB[2] = float32(math.NaN())
	err := opt.Update(m, 1e-3)
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "tensor grad h.1.mlp.c_fc.bias holds 1 non-finite") {
		t.Errorf("got %v, want ErrNonFinite naming the tensor", err)
	}
	if sameBits(before, m.Params.Data) >= 0 || sameBits(moments, opt.M.Data) >= 0 || opt.Step != step {
		t.Error("a refused update changed the weights, moments or step")
	}
}
