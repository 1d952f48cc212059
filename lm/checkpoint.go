package lm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
)

// Checkpoint folder layout, after Hugging Face's GPT-2:
//
//	config.json            model sizes (GPT-2 config keys)
//	model.safetensors      weights, named as in Config.tensors
//	tokenizer.json         the tokenizer, stored as given (optional)
//	optimizer.safetensors  AdamW moments exp_avg.<name>, exp_avg_sq.<name>;
//	                       step and hyper-parameters in its metadata (optional)
//	tokenizer_config.json, special_tokens_map.json, generation_config.json
//	                       Hugging Face's, beside a chat tokenizer (hfextra.go)
//	NAME.safetensors       further weight sets of the same layout (optional)
//	NAME                   further files, stored as given (optional)
//	checkpoint.json        size and SHA-256 of every file above, written last
//
// checkpoint.json is what makes the files one checkpoint: a loader reads
// exactly the files it lists and refuses any whose content differs, so
// files of two saves never mix unnoticed. A folder without it (Hugging
// Face's, or written before it existed) loads unchecked.
const (
	ConfigFile    = "config.json"
	WeightsFile   = "model.safetensors"
	TokenizerFile = "tokenizer.json"
	OptimizerFile = "optimizer.safetensors"
	ManifestFile  = "checkpoint.json"
)

// Checkpoint is what a checkpoint folder holds.
type Checkpoint struct {
	Model     *Model
	Optimizer *AdamW // nil: no optimizer state (inference-only checkpoint)
	Tokenizer []byte // tokenizer.json contents; nil: none
	// Weights holds further parameter vectors of the model's layout (a
	// trainer's best weights so far), each stored as NAME.safetensors.
	Weights map[string][]float32
	// Files holds further small files (a trainer's state), stored as
	// named. They are covered by checkpoint.json like the rest, so they
	// always belong to the weights beside them.
	Files map[string][]byte
}

// hfConfig is config.json: Hugging Face GPT-2 keys, so other tools can
// read the sizes.
type hfConfig struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures,omitempty"`
	VocabSize     int      `json:"vocab_size"`
	NPositions    int      `json:"n_positions"`
	NCtx          int      `json:"n_ctx,omitempty"`
	NEmbd         int      `json:"n_embd"`
	NLayer        int      `json:"n_layer"`
	NHead         int      `json:"n_head"`
	NInner        *int     `json:"n_inner"`
	Activation    string   `json:"activation_function"`
	LayerNormEps  float64  `json:"layer_norm_epsilon"`
	Tie           *bool    `json:"tie_word_embeddings"`
	ResidPdrop    float64  `json:"resid_pdrop"`
	EmbdPdrop     float64  `json:"embd_pdrop"`
	AttnPdrop     float64  `json:"attn_pdrop"`
	// Token ids, written with a chat tokenizer (hfextra.go); never read.
	BOSTokenID json.RawMessage `json:"bos_token_id,omitempty"`
	EOSTokenID json.RawMessage `json:"eos_token_id,omitempty"`
	PadTokenID json.RawMessage `json:"pad_token_id,omitempty"`
}

func toHF(c Config) hfConfig {
	tie := !c.Untied
	return hfConfig{
		ModelType: "gpt2", Architectures: []string{"GPT2LMHeadModel"},
		VocabSize: c.VocabSize, NPositions: c.Context, NCtx: c.Context,
		NEmbd: c.Dim, NLayer: c.Layers, NHead: c.Heads,
		Activation: "gelu_new", LayerNormEps: lnEps, Tie: &tie,
	}
}

// parseConfig reads config.json and rejects architectures this engine
// does not implement.
func parseConfig(data []byte) (Config, error) {
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, err
	}
	if h.ModelType != "" && h.ModelType != "gpt2" {
		return Config{}, fmt.Errorf("model_type %q, want gpt2", h.ModelType)
	}
	if h.Activation != "" && h.Activation != "gelu_new" {
		return Config{}, fmt.Errorf("activation_function %q, want gelu_new", h.Activation)
	}
	if h.LayerNormEps != 0 && h.LayerNormEps != lnEps {
		return Config{}, fmt.Errorf("layer_norm_epsilon %v, want %v", h.LayerNormEps, lnEps)
	}
	if h.NInner != nil && *h.NInner != 4*h.NEmbd {
		return Config{}, fmt.Errorf("n_inner %d, want 4·n_embd = %d", *h.NInner, 4*h.NEmbd)
	}
	c := Config{VocabSize: h.VocabSize, Context: h.NPositions, Dim: h.NEmbd, Layers: h.NLayer, Heads: h.NHead}
	c.Untied = h.Tie != nil && !*h.Tie
	return c, c.Validate()
}

// Mismatch describes how c differs from want, field by field, or returns
// nil when they are equal.
func (c Config) Mismatch(want Config) error {
	var errs []error
	diff := func(name string, got, w any) {
		if got != w {
			errs = append(errs, fmt.Errorf("%s is %v, want %v", name, got, w))
		}
	}
	diff("vocab_size", c.VocabSize, want.VocabSize)
	diff("n_positions", c.Context, want.Context)
	diff("n_embd", c.Dim, want.Dim)
	diff("n_layer", c.Layers, want.Layers)
	diff("n_head", c.Heads, want.Heads)
	diff("tie_word_embeddings", !c.Untied, !want.Untied)
	return errors.Join(errs...)
}

// manifestFormat names the layout of checkpoint.json.
const manifestFormat = "calibrl-checkpoint/1"

// manifest is checkpoint.json.
type manifest struct {
	Format string                `json:"format"`
	Files  map[string]fileDigest `json:"files"`
}

type fileDigest struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// SaveCheckpoint writes ck into dir (created if needed), beside whatever
// else dir holds (a run's final model sits next to its logs). Every file is
// written atomically and checkpoint.json goes last, so a save interrupted
// half way leaves a folder that LoadCheckpoint refuses rather than one that
// mixes two saves. A folder that must survive interruptions whole — a
// trainer's resumable checkpoint — is written with ReplaceCheckpoint.
func SaveCheckpoint(dir string, ck Checkpoint) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	if _, err := atomicfile.Clean(dir); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	prev, _ := readManifest(dir) // files of the last save that this one drops
	man, err := writeParts(dir, ck)
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	if err := writeManifest(dir, man); err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	stale := append([]string{OptimizerFile, TokenizerFile}, hfFiles...)
	if prev != nil {
		for name := range prev.Files {
			stale = append(stale, name)
		}
	}
	for _, name := range stale {
		if _, ok := man.Files[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("save checkpoint %s: %w", dir, err)
			}
		}
	}
	return nil
}

// ReplaceCheckpoint writes ck as the whole of folder dir, atomically: the
// checkpoint is written into a fresh folder beside dir, synced, and
// swapped in (atomicfile.WriteDir), so whenever the process is killed, dir
// holds either the previous checkpoint or this one, complete. Whatever
// else dir held is gone.
func ReplaceCheckpoint(dir string, ck Checkpoint) error {
	err := atomicfile.WriteDir(dir, func(tmp string) error {
		man, err := writeParts(tmp, ck)
		if err != nil {
			return err
		}
		return writeManifest(tmp, man)
	})
	if err != nil {
		return fmt.Errorf("save checkpoint %s: %w", dir, err)
	}
	return nil
}

// writeParts writes every file of ck but the manifest into dir and
// returns their digests.
func writeParts(dir string, ck Checkpoint) (manifest, error) {
	man := manifest{Format: manifestFormat, Files: map[string]fileDigest{}}
	if ck.Model == nil {
		return man, errors.New("no model")
	}
	m := ck.Model
	if err := m.Config.Validate(); err != nil {
		return man, err
	}
	ts := m.Config.tensors()
	for name := range ck.Weights {
		if err := checkExtraName(name + ".safetensors"); err != nil {
			return man, fmt.Errorf("weights %q: %w", name, err)
		}
	}
	for name := range ck.Files {
		if err := checkExtraName(name); err != nil {
			return man, fmt.Errorf("file %q: %w", name, err)
		}
		if strings.HasSuffix(name, ".safetensors") {
			return man, fmt.Errorf("file %q: .safetensors names are for weights", name)
		}
	}
	// Non-finite weights are never saved: they would only poison every
	// run that resumed or evaluated them.
	if err := finite(m.Config, m.Params.Data, ""); err != nil {
		return man, fmt.Errorf("%s: %w", WeightsFile, err)
	}
	put := func(name string, fill func(w io.Writer) error) error {
		h := sha256.New()
		var n int64
		err := atomicfile.Write(filepath.Join(dir, name), func(w io.Writer) error {
			cw := &countWriter{w: io.MultiWriter(w, h)}
			err := fill(cw)
			n = cw.n
			return err
		})
		if err != nil {
			return err
		}
		man.Files[name] = fileDigest{Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}
		return nil
	}
	putBytes := func(name string, data []byte) error {
		return put(name, func(w io.Writer) error { _, err := w.Write(data); return err })
	}
	weights := func(data []float32, prefix string) []namedTensor {
		named := make([]namedTensor, len(ts))
		for i, t := range ts {
			named[i] = namedTensor{prefix + t.name, t.shape, data[t.offset : t.offset+t.size()]}
		}
		return named
	}
	if ck.Tokenizer != nil {
		if err := putBytes(TokenizerFile, ck.Tokenizer); err != nil {
			return man, err
		}
	}
	hf, err := chatExtras(ck.Tokenizer, m.Config)
	if err != nil {
		return man, err
	}
	if hf != nil {
		for _, name := range hfFiles {
			if err := putBytes(name, hf.files[name]); err != nil {
				return man, err
			}
		}
	}
	for _, name := range sortedKeys(ck.Files) {
		if err := putBytes(name, ck.Files[name]); err != nil {
			return man, err
		}
	}
	if o := ck.Optimizer; o != nil {
		if len(o.M.Data) != len(m.Params.Data) {
			return man, fmt.Errorf("optimizer has %d moments, model %d parameters", len(o.M.Data), len(m.Params.Data))
		}
		named := append(weights(o.M.Data, "exp_avg."), weights(o.V.Data, "exp_avg_sq.")...)
		f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
		meta := map[string]string{
			"step": strconv.Itoa(o.Step), "lr": f(o.Config.LR), "beta1": f(o.Config.Beta1),
			"beta2": f(o.Config.Beta2), "eps": f(o.Config.Eps), "weight_decay": f(o.Config.WeightDecay),
		}
		if err := put(OptimizerFile, func(w io.Writer) error { return writeSafetensors(w, named, meta) }); err != nil {
			return man, err
		}
	}
	for _, name := range sortedKeys(ck.Weights) {
		data := ck.Weights[name]
		if len(data) != len(m.Params.Data) {
			return man, fmt.Errorf("weights %q have %d values, the model %d", name, len(data), len(m.Params.Data))
		}
		if err := finite(m.Config, data, ""); err != nil {
			return man, fmt.Errorf("%s.safetensors: %w", name, err)
		}
		if err := put(name+".safetensors", func(w io.Writer) error {
			return writeSafetensors(w, weights(data, ""), map[string]string{"format": "pt"})
		}); err != nil {
			return man, err
		}
	}
	if err := put(WeightsFile, func(w io.Writer) error {
		return writeSafetensors(w, weights(m.Params.Data, ""), map[string]string{"format": "pt"})
	}); err != nil {
		return man, err
	}
	h := toHF(m.Config)
	if hf != nil {
		hf.setIDs(&h)
	}
	cj, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return man, err
	}
	return man, putBytes(ConfigFile, append(cj, '\n'))
}

// checkExtraName keeps a further file a plain name of its own in the
// folder.
func checkExtraName(name string) error {
	switch {
	case name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, "."):
		return errors.New("want a plain file name")
	case name == ConfigFile || name == WeightsFile || name == TokenizerFile || name == OptimizerFile || name == ManifestFile || isHFFile(name):
		return errors.New("the name of a checkpoint's own file")
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeManifest(dir string, man manifest) error {
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, ManifestFile), append(data, '\n'))
}
