package task

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWithDataRecordsPathAndHash(t *testing.T) {
	for _, c := range []struct{ name, path, family string }{
		{"mathchat", "testdata/gsm8k", "gsm8k"},
		{"mathchat:easy:nocalc", "testdata/gsm8k-all.jsonl", "gsm8k"},
		{"docedit", "testdata/corpus", "corpus"},
		{"docedit:easy", "testdata/corpus/library.txt", "corpus"},
	} {
		full, err := WithData(c.name, c.path)
		if err != nil {
			t.Fatalf("WithData(%s, %s): %v", c.name, c.path, err)
		}
		abs, _ := filepath.Abs(c.path)
		n, err := ParseName(full)
		if err != nil || n.Data.Path != "" || len(n.Data.SHA256) != 64 || full != c.name+":data=sha256:"+n.Data.SHA256 || strings.Contains(full, abs) {
			t.Fatalf("WithData(%s, %s) = %q (%+v, %v)", c.name, c.path, full, n, err)
		}
		if Family(full) != strings.SplitN(c.name, ":", 2)[0] {
			t.Fatalf("Family(%q) = %q", full, Family(full))
		}
		tk, err := Lookup(full)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Spec() != full {
			t.Fatalf("recorded name %q, want %q", tk.Spec(), full)
		}
		for _, split := range Splits {
			o, _, err := tk.Instance(split, 0)
			if err != nil || o.Family != c.family {
				t.Fatalf("%s %s instance 0: family %q, %v", full, split, o.Family, err)
			}
		}
		// Without the hash, Lookup records it; an old name's path goes.
		for _, old := range []string{c.name + ":data=" + c.path, c.name + ":data=" + abs + "#sha256:" + n.Data.SHA256} {
			short, err := Lookup(old)
			if err != nil || short.Spec() != full {
				t.Fatalf("Lookup(%s): %v, %v; want %q", old, short, err, full)
			}
		}
	}
	// A single file's hash is its sha256sum.
	data, _ := os.ReadFile("testdata/gsm8k-all.jsonl")
	sum := sha256.Sum256(data)
	if got, _ := DataHash("mathchat", "testdata/gsm8k-all.jsonl"); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("file hash %s, want sha256sum %x", got, sum)
	}
	// The embedded default needs no data.
	if n, _ := ParseName("mathchat:easy"); !n.Data.IsZero() {
		t.Fatal("mathchat:easy names data")
	}
}

func TestDataRefused(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"train.jsonl", "test.jsonl"} {
		b, _ := os.ReadFile(filepath.Join("testdata/gsm8k", f))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	full, err := WithData("mathchat", dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("not data"), 0o644)
	if _, err := Lookup(full); err != nil {
		t.Fatalf("a README beside the data changed its identity: %v", err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "test.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"question": "Ann has 2 cats. She gets 3 more. How many cats?", "answer": "#### 5"}` + "\n")
	f.Close()
	for _, c := range []struct{ name, want string }{
		{full, "has changed since it was recorded"},
		{"mathchat:" + dir, "is not a level; give a data folder or file with --data"},
		{"mathchat:data=" + filepath.Join(dir, "missing"), "no such file"},
		{"mathchat:data=", "names no path"},
		{"mathchat:data=sha256:" + strings.Repeat("0", 64), "no --data here holds the data with sha256 0000"},
		{"docedit:data=testdata/gsm8k", "no .txt files"},
		{"mathchat:data=testdata/corpus", "train.jsonl"},
	} {
		if _, err := Lookup(c.name); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Lookup(%q): %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := WithData(full, dir); err == nil || !strings.Contains(err.Error(), "already names its data") {
		t.Errorf("WithData twice: %v", err)
	}
}
