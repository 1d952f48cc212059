package task

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
)

func TestLookupKnowsTheTasks(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "docedit,mathchat" {
		t.Fatalf("Names() = %v, want [docedit mathchat]", names)
	}
	for _, n := range names {
		tk, err := Lookup(n)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", n, err)
		}
		if tk.Name() != n {
			t.Fatalf("Lookup(%q).Name() = %q", n, tk.Name())
		}
		for _, split := range Splits {
			o, v, err := tk.Instance(split, 0)
			if err != nil || o.Task != n || v.Instructions == "" {
				t.Fatalf("%s %s instance 0: %+v %+v %v", n, split, o, v, err)
			}
		}
		if len(tk.Profiles()) < 4 {
			t.Fatalf("%s has %d scripted profiles, want at least 4", n, len(tk.Profiles()))
		}
		for _, kind := range []string{"human", "naive"} {
			if _, err := tk.User(kind); err != nil {
				t.Fatalf("%s user %s: %v", n, kind, err)
			}
		}
	}
	if _, err := Lookup("chess"); err == nil || !strings.Contains(err.Error(), "known: docedit, mathchat") {
		t.Fatalf("unknown task: got %v", err)
	}
	if err := CheckSplit("dev"); err == nil {
		t.Fatal("CheckSplit(dev): want an error")
	}
}

// Every task knows the levels and rejects other names with the name
// that was asked for.
func TestLookupLevels(t *testing.T) {
	for _, n := range Names() {
		levels := []string{"easy", "h8"}
		if n == "mathchat" {
			levels = append(levels, "h3:"+NoCalculator)
		}
		for _, level := range levels {
			if _, err := Lookup(n + ":" + level); err != nil {
				t.Errorf("Lookup(%s:%s): %v", n, level, err)
			}
		}
		name := n + ":hard"
		want := `task "` + name + `": unknown level "hard" (want easy or hN, e.g. h8)`
		if _, err := Lookup(name); err == nil || err.Error() != want {
			t.Errorf("Lookup(%s): got %v, want %s", name, err, want)
		}
	}
}

// ":ledger" gives mathchat its ledger at any level, and only mathchat;
// without it no level has an environment.
func TestLookupLedger(t *testing.T) {
	for name, want := range map[string]bool{"mathchat:h8:" + WithLedger: true, "mathchat:" + WithLedger: true, "mathchat:h8": false, "mathchat": false} {
		tk, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", name, err)
		}
		if got := dialog.EnvironmentOf(tk) != nil; got != want {
			t.Errorf("Lookup(%s): environment %v, want %v", name, got, want)
		}
	}
	if _, err := Lookup("docedit:easy:" + WithLedger); err == nil || !strings.Contains(err.Error(), "docedit has no ledger") {
		t.Errorf("docedit with a ledger: got %v", err)
	}
}
