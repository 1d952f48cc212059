package task

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/calibrl/calibrl/infile"
)

// A task can take its instances from the user's own data instead of its
// generator: mathchat from a GSM8K-format folder (train.jsonl, test.jsonl)
// or file, docedit from a corpus (a folder of .txt files, one .txt file,
// or a JSONL file of {"id","title","text"} records). The data is the last
// option of the task's name, by its content hash alone:
//
//	mathchat:data=sha256:HEX
//	docedit:easy:data=sha256:HEX
//
// so that everything that records a task name (episode logs, checkpoint
// and run manifests, exports, served episodes) says which data without
// saying where one host keeps it: a dataset exported on one machine
// replays on another that holds the same bytes at any path, and no path
// leaks into what is shared. Each process says where its data lies with
// UseData (the --data flag); a name whose data no --data holds is refused.
// Names written by older versions ("data=/abs/path#sha256:HEX") still
// build: their path is tried when no --data holds the hash.

// shelf is where this process holds data, by family and content hash.
var shelf = struct {
	sync.Mutex
	paths map[[2]string]string // {family, sha256} -> absolute path
}{paths: map[[2]string]string{}}

// UseData hashes the data of family at path and holds it for the names
// that name it by hash (Lookup). Calling it again with the same data is
// harmless.
func UseData(family, path string) (Data, error) {
	if _, ok := families[family]; !ok {
		return Data{}, fmt.Errorf("data %s: unknown task %q", path, family)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Data{}, fmt.Errorf("data %s: %w", path, err)
	}
	sum, err := DataHash(family, abs)
	if err != nil {
		return Data{}, err
	}
	shelf.Lock()
	shelf.paths[[2]string{family, sum}] = abs
	shelf.Unlock()
	return Data{SHA256: sum}, nil
}

// resolveData finds where n's data lies on this host: where UseData put
// data with its hash, else the path n came with, whose content must still
// have the hash n records. It returns n with its data named by hash alone.
func resolveData(n Name) (Name, string, error) {
	if h := n.Data.SHA256; h != "" {
		shelf.Lock()
		p, ok := shelf.paths[[2]string{n.Family, h}]
		shelf.Unlock()
		if ok {
			// Read again: the bytes may have changed since UseData.
			sum, err := DataHash(n.Family, p)
			if err != nil {
				return n, "", err
			}
			if sum != h {
				return n, "", fmt.Errorf("the data at %s has changed since it was recorded (sha256 %s, now %s)", p, h, sum)
			}
			n.Data = Data{SHA256: h}
			return n, p, nil
		}
		if n.Data.Path == "" {
			return n, "", fmt.Errorf("no --data here holds the data with sha256 %s (give a copy of it, at any path, with --data)", h)
		}
	}
	abs, err := filepath.Abs(n.Data.Path)
	if err != nil {
		return n, "", err
	}
	sum, err := DataHash(n.Family, abs)
	if err != nil {
		return n, "", err
	}
	if n.Data.SHA256 != "" && n.Data.SHA256 != sum {
		return n, "", fmt.Errorf("the data at %s has changed since it was recorded (sha256 %s, now %s)", abs, n.Data.SHA256, sum)
	}
	n.Data = Data{SHA256: sum}
	return n, abs, nil
}

// Family is the task family a name builds ("mathchat" for
// "mathchat:easy:data=sha256:…"), or "" for a name that does not parse.
func Family(name string) string {
	n, err := ParseName(name)
	if err != nil {
		return ""
	}
	return n.Family
}

// WithData returns name with the data at path as its last option, by
// content hash, after checking that the data loads as the task's; the
// process holds the data for the names that name it (UseData). An empty
// path returns name unchanged.
func WithData(name, path string) (string, error) {
	if path == "" {
		return name, nil
	}
	n, err := ParseName(name)
	if err != nil {
		return "", err
	}
	if !n.Data.IsZero() {
		return "", fmt.Errorf("task %q already names its data; --data %s is one too many", name, path)
	}
	if n.Data, err = UseData(n.Family, path); err != nil {
		return "", fmt.Errorf("task %q: %w", name, err)
	}
	if _, err := Build(n); err != nil {
		return "", err
	}
	return n.String(), nil
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
	f, ok := families[family]
	if !ok {
		return "", fmt.Errorf("data %s: unknown task %q", path, family)
	}
	files, err := f.dataFiles(path)
	if err != nil {
		return "", fmt.Errorf("data %s: %w", path, err)
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
	f, err := infile.Open(nil, path)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("data %s: %w", path, err)
	}
	return nil
}
