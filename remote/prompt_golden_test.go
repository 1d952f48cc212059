package remote

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/calibrl/calibrl/task"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The LLM user's role-play prompt of one instance of each task, byte for
// byte: export writes the same text into a fine-tuned simulator's
// training data, so a refactor of how it is written must not change a
// byte of it, and ParseUserSystemPrompt reads the oracle back from it.
func TestUserSystemPromptGolden(t *testing.T) {
	for _, name := range []string{"mathchat", "docedit", "support"} {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := tk.Instance("test", 3)
		if err != nil {
			t.Fatal(err)
		}
		got := UserSystemPrompt(o)
		path := filepath.Join("testdata", "usersystemprompt-"+name+".golden")
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
			t.Errorf("%s: role-play prompt changed:\n got %q\nwant %q", name, got, want)
		}
	}
}
