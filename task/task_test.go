package task

import (
	"strings"
	"testing"
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
