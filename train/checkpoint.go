package train

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
)

// trainerStateFile is the trainer's state inside a resumable checkpoint.
// It is one of the checkpoint's files (lm.Checkpoint.Files), so it is
// written and swapped in together with the weights and the optimizer and
// can never be of another save than they are.
const trainerStateFile = "trainer_state.json"

// saveResumable writes dir as one resumable checkpoint, all at once
// (lm.ReplaceCheckpoint): model, optimizer, trainer state and any further
// weight sets.
func saveResumable(dir string, m *chatlm.Model, opt *lm.AdamW, state any, weights map[string][]float32) error {
	return lm.ReplaceCheckpoint(dir, lm.Checkpoint{
		Model: m.LM, Optimizer: opt, Tokenizer: m.Tok.Bytes(), Weights: weights,
		Files: map[string][]byte{trainerStateFile: mustJSON(state)},
	})
}

// resumable is a loaded resumable checkpoint.
type resumable struct {
	model   *chatlm.Model
	opt     *lm.AdamW
	weights map[string][]float32
}

// loadResumable reads the checkpoint in dir into state. It reports false
// when there is none to resume (no folder, or one without trainer state:
// a run killed before its first checkpoint). Whatever is found must be one
// consistent checkpoint of this run's model: its checkpoint.json must list
// the trainer state, its config and tokenizer must be the run's, and it
// must carry the optimizer.
func loadResumable(dir string, run *chatlm.Model, state any) (*resumable, bool, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	_, serr := os.Stat(filepath.Join(dir, trainerStateFile))
	_, merr := os.Stat(filepath.Join(dir, lm.ManifestFile))
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(merr, fs.ErrNotExist):
		return nil, false, fmt.Errorf("resume %s: no %s: the checkpoint was written by an older calibrl that saved its parts one by one, so they may come from different saves: use a fresh out folder", dir, lm.ManifestFile)
	}
	ck, err := lm.LoadCheckpoint(dir)
	if err != nil {
		return nil, false, fmt.Errorf("resume: %w", err)
	}
	data, ok := ck.Files[trainerStateFile]
	if !ok {
		return nil, false, fmt.Errorf("resume %s: %s does not list %s", dir, lm.ManifestFile, trainerStateFile)
	}
	if err := json.Unmarshal(data, state); err != nil {
		return nil, false, fmt.Errorf("resume %s: %s: %w", dir, trainerStateFile, err)
	}
	if err := ck.Model.Config.Mismatch(run.LM.Config); err != nil {
		return nil, false, fmt.Errorf("resume %s: %w", dir, err)
	}
	tok, err := tokenizer.Parse(ck.Tokenizer)
	if err != nil || !tok.Equal(run.Tok) {
		return nil, false, fmt.Errorf("resume %s: its tokenizer differs from this run's", dir)
	}
	if ck.Optimizer == nil {
		return nil, false, fmt.Errorf("resume %s: no optimizer state", dir)
	}
	m, err := chatlm.New(ck.Model, tok)
	if err != nil {
		return nil, false, fmt.Errorf("resume %s: %w", dir, err)
	}
	return &resumable{model: m, opt: ck.Optimizer, weights: ck.Weights}, true, nil
}

// cleanOut removes what writers killed earlier left in a trainer's out
// folder (half-written files and checkpoint folders).
func cleanOut(out string) error {
	removed, err := atomicfile.Clean(out)
	if len(removed) > 0 {
		slog.Info("removed leftovers of an interrupted save", "dir", out, "names", removed)
	}
	if err != nil {
		return fmt.Errorf("clean %s: %w", out, err)
	}
	return nil
}

// settingsDiff lists, by JSON name, the fields in which two values of the
// same struct type differ, as "name a → b".
func settingsDiff(was, now any) []string {
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	var out []string
	for i := 0; i < a.NumField(); i++ {
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		x, y := a.Field(i).Interface(), b.Field(i).Interface()
		if !reflect.DeepEqual(x, y) {
			out = append(out, fmt.Sprintf("%s %v → %v", name, x, y))
		}
	}
	return out
}

// userFingerprint names the training user of an RL run, so that a resume
// against another user is refused: its type, and for a learned simulator
// whether it sees the oracle context and a digest of its weights (two
// simulators from different folders differ there).
func userFingerprint(u dialog.User) string {
	s := fmt.Sprintf("%T", u)
	if cu, ok := u.(*chatlm.User); ok && cu.Model != nil {
		h := sha256.New()
		buf := make([]byte, 0, 1<<16)
		for _, v := range cu.Model.LM.Params.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
		h.Write(buf)
		s += fmt.Sprintf(" oracle=%v judged=%v weights=%s", cu.Oracle, cu.Judge != nil, hex.EncodeToString(h.Sum(nil))[:16])
	}
	return s
}
