package task

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/task/mathchat"
)

// A task can take its instances from the user's own data instead of its
// generator: mathchat from a GSM8K-format folder (train.jsonl, test.jsonl)
// or file, docedit from a corpus (a folder of .txt files, one .txt file,
// or a JSONL file of {"id","title","text"} records). The data is the last
// option of the task's name, with its content hash:
//
//	mathchat:data=/abs/gsm8k#sha256:HEX
//	docedit:easy:data=/abs/corpus#sha256:HEX
//
// so that everything that records a task name (episode logs, checkpoint
// and run manifests, exports, served episodes) records which data, by path
// and content, and rebuilds the same instances from it; a name whose data
// has changed since is refused. WithData writes such a name from --data;
// Lookup also takes one without the hash and records it with the hash.

// dataOption starts the data option; the path runs to the end of the name
// (or to its hash), so it may hold colons.
const dataOption = ":data="

// hashPrefix separates the path from its content hash.
const hashPrefix = "#sha256:"

// Data is the identity of a task's data.
type Data struct {
	// Path is the absolute path of the folder or file.
	Path string `json:"path"`
	// SHA256 is the hex content hash (DataHash).
	SHA256 string `json:"sha256"`
}

// DataOf returns the data a task name carries, ok false for a name
// without data. The hash is empty when the name gave none.
func DataOf(name string) (d Data, ok bool) {
	i := strings.Index(name, dataOption)
	if i < 0 {
		return Data{}, false
	}
	rest := name[i+len(dataOption):]
	if j := strings.LastIndex(rest, hashPrefix); j >= 0 {
		return Data{Path: rest[:j], SHA256: rest[j+len(hashPrefix):]}, true
	}
	return Data{Path: rest}, true
}

// withoutData returns name without its data option.
func withoutData(name string) string {
	if i := strings.Index(name, dataOption); i >= 0 {
		return name[:i]
	}
	return name
}

// Family is the task family a name builds ("mathchat" for
// "mathchat:easy:data=/x#sha256:…").
func Family(name string) string {
	base, _, _ := strings.Cut(withoutData(name), ":")
	return base
}

// WithData returns name with the data at path as its last option: the
// path made absolute and the data's content hash, checked to load as the
// task's data. An empty path returns name unchanged.
func WithData(name, path string) (string, error) {
	if path == "" {
		return name, nil
	}
	if _, ok := DataOf(name); ok {
		return "", fmt.Errorf("task %q already names its data; --data %s is one too many", name, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("--data %s: %w", path, err)
	}
	t, err := Lookup(name + dataOption + abs)
	if err != nil {
		return "", err
	}
	return dialog.TaskName(t), nil
}

// DataHash is the content hash of a task family's data at path: for a file
// the SHA-256 of its bytes (what sha256sum prints); for a folder the
// SHA-256 over the files the task reads from it (mathchat: train.jsonl and
// test.jsonl; docedit: *.txt), in name order, each as its base name, a NUL,
// its length in decimal, a NUL and its bytes. Other files in the folder
// (a README, a LICENSE) do not count.
func DataHash(family, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("data: %w", err)
	}
	h := sha256.New()
	if !st.IsDir() {
		if err := hashFile(h, path); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	var files []string
	switch family {
	case "mathchat":
		files = []string{filepath.Join(path, "train.jsonl"), filepath.Join(path, "test.jsonl")}
	default:
		if files, err = filepath.Glob(filepath.Join(path, "*.txt")); err != nil {
			return "", fmt.Errorf("data %s: %w", path, err)
		}
		sort.Strings(files)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("data: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f), st.Size())
		if err := hashFile(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("data %s: %w", path, err)
	}
	return nil
}

// withDataOf builds t's copy on the data the name carries, checks the
// data's hash against the name's, and returns the name to record (with
// the hash).
func withDataOf(t Task, name string) (Task, string, error) {
	d, _ := DataOf(name)
	if d.Path == "" {
		return nil, "", fmt.Errorf("task %q: data= names no path", name)
	}
	if !filepath.IsAbs(d.Path) {
		abs, err := filepath.Abs(d.Path)
		if err != nil {
			return nil, "", fmt.Errorf("task %q: %w", name, err)
		}
		d.Path = abs
	}
	sum, err := DataHash(t.Name(), d.Path)
	if err != nil {
		return nil, "", fmt.Errorf("task %q: %w", name, err)
	}
	if d.SHA256 != "" && d.SHA256 != sum {
		return nil, "", fmt.Errorf("task %q: the data at %s has changed since it was recorded (sha256 %s, now %s)", name, d.Path, d.SHA256, sum)
	}
	var out Task
	switch x := t.(type) {
	case *mathchat.Task:
		out, err = x.WithGSM8K(d.Path)
	case *docedit.Task:
		out, err = x.WithCorpus(d.Path)
	default:
		err = errors.New("this task takes no data")
	}
	if err != nil {
		return nil, "", fmt.Errorf("task %q: %w", name, err)
	}
	return out, withoutData(name) + dataOption + d.Path + hashPrefix + sum, nil
}
