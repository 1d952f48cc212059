package chatlm_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/task"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The simulator's conditioning text of one instance of each task, byte
// for byte: a trained simulator was conditioned on this text, so a
// refactor of how it is written must not change a byte of it.
func TestOracleContextGolden(t *testing.T) {
	for _, name := range []string{"mathchat", "docedit", "support"} {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := tk.Instance("test", 3)
		if err != nil {
			t.Fatal(err)
		}
		got := chatlm.OracleContext(o)
		path := filepath.Join("testdata", "oraclecontext-"+name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: conditioning text changed:\n got %q\nwant %q", name, got, want)
		}
	}
}
