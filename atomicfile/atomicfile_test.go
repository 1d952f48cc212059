package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func fillWith(files map[string]string) func(string) error {
	return func(tmp string) error {
		for n, c := range files {
			if err := os.WriteFile(filepath.Join(tmp, n), []byte(c), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestWriteDirReplacesWholeFolder(t *testing.T) {
	for _, withExchange := range []bool{true, false} {
		t.Run("exchange="+strconv.FormatBool(withExchange), func(t *testing.T) {
			if !withExchange {
				defer func(f func(a, b string) (bool, error)) { exchangeDir = f }(exchangeDir)
				exchangeDir = func(a, b string) (bool, error) { return false, nil }
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "last")
			if err := WriteDir(dir, fillWith(map[string]string{"a": "1", "b": "1"})); err != nil {
				t.Fatal(err)
			}
			if err := WriteDir(dir, fillWith(map[string]string{"a": "2"})); err != nil {
				t.Fatal(err)
			}
			if got := readDir(t, dir); len(got) != 1 || got["a"] != "2" {
				t.Errorf("after the second write: %v, want only a=2 (b of the first write gone)", got)
			}
			if got := names(t, parent); !slices.Equal(got, []string{"last"}) {
				t.Errorf("parent holds %v, want only last", got)
			}
			// A failing fill leaves the old folder as it was.
			boom := errors.New("boom")
			err := WriteDir(dir, func(tmp string) error {
				os.WriteFile(filepath.Join(tmp, "a"), []byte("3"), 0o644)
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("got %v, want boom", err)
			}
			if got := readDir(t, dir); got["a"] != "2" {
				t.Errorf("after a failed write: %v, want a=2", got)
			}
			if got := names(t, parent); !slices.Equal(got, []string{"last"}) {
				t.Errorf("after a failed write the parent holds %v", got)
			}
		})
	}
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	return cmd.Process.Pid
}

func TestCleanRemovesOnlyLeftoversOfDeadWriters(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	mine := strconv.Itoa(os.Getpid())
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".model.safetensors.tmp-" + dead + "-123")              // killed file write
	write(".model.safetensors.tmp-" + mine + "-456")              // in progress here
	write("model.safetensors")                                    // not a temporary
	os.Mkdir(filepath.Join(dir, ".last.tmp-"+dead+"-789"), 0o755) // killed folder write
	write(".old-style.tmp-424242")                                // legacy, recent
	write(".older-style.tmp-434343")                              // legacy, old
	old := time.Now().Add(-2 * legacyAge)
	os.Chtimes(filepath.Join(dir, ".older-style.tmp-434343"), old, old)

	removed, err := Clean(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	want := []string{".last.tmp-" + dead + "-789", ".model.safetensors.tmp-" + dead + "-123", ".older-style.tmp-434343"}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	left := names(t, dir)
	for _, keep := range []string{".model.safetensors.tmp-" + mine + "-456", "model.safetensors", ".old-style.tmp-424242"} {
		if !slices.Contains(left, keep) {
			t.Errorf("Clean removed %s", keep)
		}
	}
}

func TestCleanFinishesAHalfDoneSwap(t *testing.T) {
	parent := t.TempDir()
	// Killed between "last → .last.old" and "tmp → last": the old folder
	// comes back.
	os.Mkdir(filepath.Join(parent, ".last.old"), 0o755)
	os.WriteFile(filepath.Join(parent, ".last.old", "a"), []byte("old"), 0o644)
	if _, err := Clean(parent); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, filepath.Join(parent, "last")); got["a"] != "old" {
		t.Errorf("last holds %v, want the old folder back", got)
	}
	// Killed after the new folder got in place: the old one goes.
	os.Mkdir(filepath.Join(parent, ".last.old"), 0o755)
	if _, err := Clean(parent); err != nil {
		t.Fatal(err)
	}
	if got := names(t, parent); !slices.Equal(got, []string{"last"}) {
		t.Errorf("parent holds %v, want only last", got)
	}
}

// A write first removes what killed writes of its own destination left
// beside it, and nothing else: the leftover of a killed 'collect' goes
// when the file is next written.
func TestWriteSweepsLeftoversOfItsDestination(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	own := ".logs.jsonl.tmp-" + dead + "-1"
	other := ".other.jsonl.tmp-" + dead + "-2"
	for _, name := range []string{own, other} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteBytes(filepath.Join(dir, "logs.jsonl"), []byte("whole\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := names(t, dir), []string{other, "logs.jsonl"}; !slices.Equal(got, want) {
		t.Errorf("after the write: %v, want %v", got, want)
	}
}
