package task

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
)

func TestLookupKnowsTheTasks(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "docedit,mathchat,support" {
		t.Fatalf("Names() = %v, want [docedit mathchat support]", names)
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
		for _, kind := range []dialog.UserKind{dialog.Human, dialog.Naive} {
			if _, err := tk.User(kind); err != nil {
				t.Fatalf("%s user %s: %v", n, kind, err)
			}
		}
	}
	if _, err := Lookup("chess"); err == nil || !strings.Contains(err.Error(), "known: docedit, mathchat, support") {
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

// ":userledger" gives the learned simulator its notes in every family, at
// any level and with the other options or without, in one canonical
// spelling; without it no name shows the simulator notes, and it gives
// the agent no environment of its own.
func TestLookupUserLedger(t *testing.T) {
	for _, c := range []struct {
		name, canonical string
		notes, env      bool
	}{
		{"mathchat:" + WithUserLedger, "mathchat:userledger", true, false},
		{"mathchat:ledger:userledger", "mathchat:ledger:userledger", true, true},
		{"mathchat:userledger:ledger", "mathchat:ledger:userledger", true, true},
		{"mathchat:h8:ledger:userledger", "mathchat:h8:ledger:userledger", true, true},
		{"mathchat:h16:userledger:nocalc", "mathchat:h16:nocalc:userledger", true, false},
		{"mathchat:h8:ledger", "mathchat:h8:ledger", false, true},
		{"mathchat", "mathchat", false, false},
		{"support:" + WithUserLedger, "support:userledger", true, true},
		{"support:easy:userledger", "support:easy:userledger", true, true},
		{"support:h8", "support:h8", false, true},
		{"docedit:easy:userledger", "docedit:easy:userledger", true, true},
		{"docedit:quote:userledger:leak=2x", "docedit:userledger:quote:leak=2x", true, true},
		{"docedit:easy", "docedit:easy", false, true},
	} {
		if got, err := Canonical(c.name); err != nil || got != c.canonical {
			t.Errorf("Canonical(%q) = %q, %v; want %q", c.name, got, err, c.canonical)
		}
		tk, err := Lookup(c.name)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", c.name, err)
		}
		if got := chatlm.UserNotesOf(tk) != nil; got != c.notes {
			t.Errorf("Lookup(%s): notes to the simulator %v, want %v", c.name, got, c.notes)
		}
		if got := dialog.EnvironmentOf(tk) != nil; got != c.env {
			t.Errorf("Lookup(%s): environment %v, want %v", c.name, got, c.env)
		}
	}
	for _, name := range Names() {
		if !(Name{Family: name}).Offers(WithUserLedger) {
			t.Errorf("%s does not offer :%s", name, WithUserLedger)
		}
	}
}

// Names that build the same task have one canonical name, which builds
// that task again; names of different tasks keep different ones.
func TestCanonical(t *testing.T) {
	dir := t.TempDir()
	for want, names := range map[string][]string{
		"mathchat:h1":          {"mathchat:h1", "mathchat:h01", "mathchat:h001", "mathchat:h+1"},
		"mathchat":             {"mathchat"},
		"mathchat:easy:ledger": {"mathchat:easy:ledger"},
		"mathchat:nocalc":      {"mathchat:nocalc", "mathchat::nocalc"},
		"docedit:h8":           {"docedit:h08"},
		"docedit:easy:quote:leak=2x:syc=0x:reward=acceptance": {"docedit:easy:quote:leak=2x:syc=0x:reward=acceptance",
			"docedit:easy:reward=acceptance:syc=0x:leak=2.0x:quote", "docedit:easy:quote:leak=2x:syc=0x:leak=2x:reward=acceptance"},
		"docedit:quote":          {"docedit:quote", "docedit:quote:leak=1x:syc=1x"},
		"mathchat:nocalc:ledger": {"mathchat:ledger:nocalc"},
		"mathchat:data=" + dir:   {"mathchat:data=" + dir, "mathchat:data=" + dir + "/", "mathchat:data=" + dir + "/./", "mathchat:data=" + filepath.Dir(dir) + "//" + filepath.Base(dir)},
	} {
		for _, n := range names {
			got, err := Canonical(n)
			if err != nil || got != want {
				t.Errorf("Canonical(%q) = %q, %v; want %q", n, got, err, want)
			}
		}
		if !strings.Contains(want, "data=") {
			if _, err := Lookup(want); err != nil {
				t.Errorf("the canonical name %q does not build: %v", want, err)
			}
		}
	}
	if a, _ := Canonical("mathchat:h1"); a == "mathchat:h10" {
		t.Error("h1 and h10 share a name")
	}
	for _, bad := range []string{"nope", "mathchat:h0", "mathchat:hx", "docedit:nocalc", "mathchat:easy:bogus", "mathchat:data="} {
		if got, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", bad, got)
		}
	}
}

// The dose options scale the naive simulator's rates (capped at 1), the
// quote and acceptance options reach the tasks, and a bad option is
// refused with the reason.
func TestLookupDoseQuoteAcceptance(t *testing.T) {
	for _, tc := range []struct {
		name      string
		leak, syc float64 // the docedit naive rates: leakage, sycophancy
		quote     bool
	}{
		{"docedit", 0.7, 0.5, false},
		{"docedit:quote", 0.7, 0.5, true},
		{"docedit:easy:quote:leak=0x:syc=2x", 0, 1, true},
		{"docedit:leak=2x", 1, 0.5, false},
		{"docedit:syc=0x:reward=acceptance", 0.7, 0, false},
	} {
		tk, err := Lookup(tc.name)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", tc.name, err)
		}
		u, err := tk.User("naive")
		if err != nil {
			t.Fatal(err)
		}
		rates := fmt.Sprintf("%+v", u)
		if want := fmt.Sprintf("Leakage:%g", tc.leak); !strings.Contains(rates, want) || !strings.Contains(rates, fmt.Sprintf("Sycophancy:%g", tc.syc)) {
			t.Errorf("Lookup(%s): naive user %s, want leakage %g and sycophancy %g", tc.name, rates, tc.leak, tc.syc)
		}
		if got := dialog.ToolOf(tk) != nil; got != tc.quote {
			t.Errorf("Lookup(%s): tool %v, want %v", tc.name, got, tc.quote)
		}
	}
	for name, want := range map[string]string{
		"docedit:leak=2":          "want a multiple of the default rate",
		"docedit:leak=-1x":        "want a multiple of the default rate",
		"docedit:syc=11x":         "want a multiple of the default rate",
		"mathchat:quote":          "mathchat has no quote tool",
		"docedit:reward=bleu":     "unknown option",
		"mathchat:easy:leak=x2":   "want a multiple of the default rate",
		"docedit:easy:quote:what": "unknown option",
	} {
		if _, err := Lookup(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%s): got %v, want an error with %q", name, err, want)
		}
	}
}

// Under reward=acceptance mathchat pays the user's thanks, sycophantic or
// not, and the answer's correctness stays the success.
func TestMathchatAcceptanceReward(t *testing.T) {
	tk, err := Lookup("mathchat:easy:syc=2x:" + AcceptanceReward)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := tk.Instance("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []dialog.Message{{Role: dialog.RoleAssistant, Content: "The answer is 123456789."},
		{Role: dialog.RoleUser, Content: "Great, thank you so much for your help!"}}
	if s := tk.Score(o, msgs); s.Reward != 1 || s.Success {
		t.Errorf("a wrong answer thanked: reward %g success %v, want 1 and false", s.Reward, s.Success)
	}
	if s := tk.Score(o, msgs[:1]); s.Reward != 0 {
		t.Errorf("no thanks: reward %g, want 0", s.Reward)
	}
}

func TestStripDosesAndWithLevel(t *testing.T) {
	for name, want := range map[string]string{
		"docedit:easy:quote:leak=2x:syc=0x":                      "docedit:easy:quote",
		"docedit:reward=acceptance":                              "docedit",
		"mathchat:h8:ledger:syc=2x":                              "mathchat:h8:ledger",
		"docedit:leak=0x:data=sha256:" + strings.Repeat("0", 64): "docedit:data=sha256:" + strings.Repeat("0", 64),
	} {
		if got := StripDoses(name); got != want {
			t.Errorf("StripDoses(%s) = %s, want %s", name, got, want)
		}
	}
	for _, c := range [][3]string{
		{"docedit", "easy", "docedit:easy"},
		{"docedit:quote:leak=2x", "easy", "docedit:easy:quote:leak=2x"},
		{"docedit:h4:quote", "easy", "docedit:h4:quote"},
		{"docedit:quote", "", "docedit:quote"},
		{"docedit:data=/x", "easy", "docedit:data=/x"},
	} {
		if got := WithLevel(c[0], c[1]); got != c[2] {
			t.Errorf("WithLevel(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

func TestOffers(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{{"mathchat:easy", true}, {"mathchat", true}, {"docedit", false}, {"support:h8", false}} {
		n, err := ParseName(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Offers(NoCalculator); got != c.want {
			t.Errorf("%s offers %s: %v, want %v", c.name, NoCalculator, got, c.want)
		}
	}
}
