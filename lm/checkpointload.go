package lm

// Loading a checkpoint folder: the manifest, then every part checked
// (size, digest, tensor layout, finite values) before it is used; the
// writing side is checkpoint.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// readManifest reads dir's checkpoint.json; nil and no error when there is
// none.
func readManifest(dir string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var man manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&man); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if man.Format != manifestFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", ManifestFile, man.Format, manifestFormat)
	}
	for name := range man.Files {
		if name != ConfigFile && name != WeightsFile && name != TokenizerFile && name != OptimizerFile && !isHFFile(name) {
			if err := checkExtraName(name); err != nil {
				return nil, fmt.Errorf("%s: file %q: %w", ManifestFile, name, err)
			}
		}
	}
	for _, name := range []string{ConfigFile, WeightsFile} {
		if _, ok := man.Files[name]; !ok {
			return nil, fmt.Errorf("%s does not list %s", ManifestFile, name)
		}
	}
	return &man, nil
}

// loader reads one checkpoint folder and remembers the digest of every
// file it read, to compare with the manifest once everything else checked
// out: a file that is broken in itself gets the specific error (a bad
// shape, a NaN), and one that is fine but from another save gets the
// manifest's.
type loader struct {
	dir  string
	man  *manifest // nil: no checkpoint.json
	read map[string]fileDigest
}

func (l *loader) note(name string, size int64, sum string) {
	l.read[name] = fileDigest{Bytes: size, SHA256: sum}
}

// verify compares every file read with the manifest.
func (l *loader) verify() error {
	if l.man == nil {
		return nil
	}
	for _, name := range sortedKeys(l.read) {
		got, want := l.read[name], l.man.Files[name]
		if got != want {
			return fmt.Errorf("%s does not match %s (%d bytes, sha256 %.12s…; recorded %d bytes, %.12s…): the checkpoint's files come from different saves", name, ManifestFile, got.Bytes, got.SHA256, want.Bytes, want.SHA256)
		}
	}
	return nil
}

// has reports whether the checkpoint has an optional file: listed in the
// manifest, or, without one, present.
func (l *loader) has(name string) (bool, error) {
	if l.man != nil {
		_, ok := l.man.Files[name]
		return ok, nil
	}
	_, err := os.Stat(filepath.Join(l.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// readSmall reads a small file of the checkpoint.
func (l *loader) readSmall(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(l.dir, name))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	l.note(name, int64(len(data)), hex.EncodeToString(sum[:]))
	return data, nil
}

// LoadCheckpoint reads a folder written by SaveCheckpoint or
// ReplaceCheckpoint. config.json is checked against sane bounds and every
// tensor's name and shape against config.json before anything is
// allocated; the error names the file and the first tensor that is
// missing, unexpected or of the wrong shape. Weights or moments that hold
// a NaN or an infinity are refused. With a checkpoint.json, exactly the
// files it lists are read and each must match it; without one (a Hugging
// Face folder), the optimizer and tokenizer are loaded when their files
// exist.
func LoadCheckpoint(dir string) (*Checkpoint, error) {
	ck, err := loadCheckpoint(dir)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %s: %w", dir, err)
	}
	return ck, nil
}

func loadCheckpoint(dir string) (*Checkpoint, error) {
	man, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{dir: dir, man: man, read: map[string]fileDigest{}}
	cdata, err := l.readSmall(ConfigFile)
	if err != nil {
		return nil, err
	}
	cfg, err := parseConfig(cdata)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigFile, err)
	}
	ck := &Checkpoint{}
	// The weights file's header is checked against the config before the
	// model is allocated: a config that claims a huge model is refused by
	// the file it describes.
	wf, err := openChecked(dir, WeightsFile, cfg, "")
	if err != nil {
		return nil, err
	}
	defer wf.Close()
	m := newModel(cfg)
	if err := l.readTensors(wf, WeightsFile, cfg, map[string][]float32{"": m.Params.Data}); err != nil {
		return nil, err
	}
	ck.Model = m
	if ok, err := l.has(OptimizerFile); err != nil {
		return nil, err
	} else if ok {
		if ck.Optimizer, err = l.loadOptimizer(cfg); err != nil {
			return nil, err
		}
	}
	if ok, err := l.has(TokenizerFile); err != nil {
		return nil, err
	} else if ok {
		if ck.Tokenizer, err = l.readSmall(TokenizerFile); err != nil {
			return nil, err
		}
	}
	if man != nil {
		for _, name := range sortedKeys(man.Files) {
			switch name {
			case ConfigFile, WeightsFile, OptimizerFile, TokenizerFile:
				continue
			}
			if isHFFile(name) { // derived from tokenizer.json: checked, not kept
				if _, err := l.readSmall(name); err != nil {
					return nil, err
				}
				continue
			}
			if base, ok := strings.CutSuffix(name, ".safetensors"); ok {
				f, err := openChecked(dir, name, cfg, "")
				if err != nil {
					return nil, err
				}
				data := make([]float32, cfg.NumParams())
				err = l.readTensors(f, name, cfg, map[string][]float32{"": data})
				f.Close()
				if err != nil {
					return nil, err
				}
				if ck.Weights == nil {
					ck.Weights = map[string][]float32{}
				}
				ck.Weights[base] = data
				continue
			}
			data, err := l.readSmall(name)
			if err != nil {
				return nil, err
			}
			if ck.Files == nil {
				ck.Files = map[string][]byte{}
			}
			ck.Files[name] = data
		}
	}
	if err := l.verify(); err != nil {
		return nil, err
	}
	return ck, nil
}

// openChecked opens a tensors file of the checkpoint and checks its header
// against cfg's layout under each prefix, before anything is allocated.
func openChecked(dir, name string, cfg Config, prefixes ...string) (*tensorFile, error) {
	tf, err := openTensors(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	if err := checkLayout(tf.entries, cfg, prefixes); err != nil {
		tf.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tf, nil
}

// readTensors reads tf's tensors into the buffers of each prefix (laid
// out as cfg's parameters) and checks them for NaN and infinities.
func (l *loader) readTensors(tf *tensorFile, name string, cfg Config, dst map[string][]float32) error {
	byName := map[string][]float32{}
	for prefix, buf := range dst {
		for _, t := range cfg.tensors() {
			byName[prefix+t.name] = buf[t.offset : t.offset+t.size()]
		}
	}
	sum, err := tf.read(func(n string) []float32 { return byName[n] })
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.note(name, tf.size, sum)
	return nil
}

func (l *loader) loadOptimizer(cfg Config) (*AdamW, error) {
	tf, err := openChecked(l.dir, OptimizerFile, cfg, "exp_avg.", "exp_avg_sq.")
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	o, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		return nil, err
	}
	if err := l.readTensors(tf, OptimizerFile, cfg, map[string][]float32{"exp_avg.": o.M.Data, "exp_avg_sq.": o.V.Data}); err != nil {
		return nil, err
	}
	meta := tf.meta
	num := func(key string) (float64, error) {
		v, err := strconv.ParseFloat(meta[key], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: metadata %s: %w", OptimizerFile, key, err)
		}
		return v, nil
	}
	step, err := strconv.Atoi(meta["step"])
	if err != nil || step < 0 {
		return nil, fmt.Errorf("%s: metadata step %q is not a step count", OptimizerFile, meta["step"])
	}
	o.Step = step
	for key, dst := range map[string]*float64{"lr": &o.Config.LR, "beta1": &o.Config.Beta1, "beta2": &o.Config.Beta2, "eps": &o.Config.Eps, "weight_decay": &o.Config.WeightDecay} {
		if *dst, err = num(key); err != nil {
			return nil, err
		}
	}
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", OptimizerFile, err)
	}
	return o, nil
}

// checkLayout checks that entries are exactly cfg's tensors under each
// prefix, with the config's shapes.
func checkLayout(entries []stEntry, cfg Config, prefixes []string) error {
	byName := make(map[string]stEntry, len(entries))
	for _, e := range entries {
		byName[e.name] = e
	}
	want := cfg.tensors()
	known := make(map[string]bool, len(want)*len(prefixes))
	for _, prefix := range prefixes {
		for _, w := range want {
			known[prefix+w.name] = true
			e, ok := byName[prefix+w.name]
			if !ok {
				return fmt.Errorf("tensor %s missing (config wants shape %s)", prefix+w.name, shapeString(w.shape))
			}
			if shapeString(e.shape) != shapeString(w.shape) {
				return fmt.Errorf("tensor %s has shape %s, config wants %s", prefix+w.name, shapeString(e.shape), shapeString(w.shape))
			}
		}
	}
	for _, e := range entries {
		if !known[e.name] {
			return fmt.Errorf("unexpected tensor %s %s not in config", e.name, shapeString(e.shape))
		}
	}
	return nil
}

// finite reports the first tensor of data (laid out as cfg's parameters)
// that holds a NaN or an infinity.
func finite(cfg Config, data []float32, prefix string) error {
	for _, v := range data {
		if v-v != 0 {
			goto bad
		}
	}
	return nil
bad:
	for _, t := range cfg.tensors() {
		n, first := 0, -1
		for i, v := range data[t.offset : t.offset+t.size()] {
			if v-v != 0 {
				if n == 0 {
					first = i
				}
				n++
			}
		}
		if n > 0 {
			return fmt.Errorf("tensor %s holds %d non-finite values (the first, %v, at index %d)", prefix+t.name, n, data[t.offset+first], first)
		}
	}
	return nil
}
