package task

import (
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	for _, c := range []struct{ in, want string }{
		{"mathchat", "mathchat"},
		{"mathchat:easy", "mathchat:easy"},
		{"mathchat:h8:ledger", "mathchat:h8:ledger"},
		{"mathchat:ledger", "mathchat:ledger"},
		{"mathchat:easy:ledger:nocalc", "mathchat:easy:nocalc:ledger"}, // the family's order
		{"mathchat:h08", "mathchat:h8"},
		{"mathchat::nocalc", "mathchat:nocalc"},
		{"docedit:easy:reward=acceptance:syc=0x:leak=2.0x:quote", "docedit:easy:quote:leak=2x:syc=0x:reward=acceptance"},
		{"docedit:quote:leak=1x", "docedit:quote"},
		{"docedit:easy:data=sha256:" + hash, "docedit:easy:data=sha256:" + hash},
		{"mathchat:data=/abs/x:y#sha256:" + hash, "mathchat:data=sha256:" + hash}, // an old log's name
		{"mathchat:data=rel/gsm8k", "mathchat:data=rel/gsm8k"},                    // before Lookup reads it
	} {
		n, err := ParseName(c.in)
		if err != nil {
			t.Fatalf("ParseName(%q): %v", c.in, err)
		}
		if n.String() != c.want {
			t.Errorf("ParseName(%q).String() = %q, want %q", c.in, n.String(), c.want)
		}
	}
	n, _ := ParseName("mathchat:h8:ledger")
	if n.Family != "mathchat" || n.Level != "h8" || !n.Has(WithLedger) || n.Has(NoCalculator) || n.MaxTurns() != 8 {
		t.Errorf("mathchat:h8:ledger = %+v, max turns %d", n, n.MaxTurns())
	}
	if got := n.AtLevel("h4").String(); got != "mathchat:h4:ledger" {
		t.Errorf("AtLevel(h4) = %q", got)
	}
	if m := MeasureOf("docedit:easy"); m.Name != "BLEU" || m.Scale != 100 || m.IsSuccess() {
		t.Errorf("docedit measure %+v", m)
	}
	if m := MeasureOf("mathchat:h8"); !m.IsSuccess() {
		t.Errorf("mathchat measure %+v", m)
	}
	for _, c := range []struct{ in, want string }{
		{"chess", `unknown task "chess" (known: docedit, mathchat`},
		{"mathchat:hard", `task "mathchat:hard": unknown level "hard" (want easy or hN, e.g. h8)`},
		{"mathchat:easy:fast", `task "mathchat:easy:fast": unknown option "fast" (want nocalc, ledger, userledger, leak=DOSEx, syc=DOSEx, reward=acceptance; data=... last)`},
		{"docedit:quote:leak=2", `option "leak=2": dose "2": want a multiple`},
		{"mathchat:easy:h8", `unknown option "h8"`},
		{"mathchat:data=sha256:12", "want sha256: and 64 lower-case hex digits"},
		{"mathchat:data=/x#sha256:XYZ", "the hash is not 64 lower-case hex digits"},
		{"mathchat:data=", "data= names no path"},
		{"mathchat:./gsm8k", `"./gsm8k" is not a level; give a data folder or file with --data`},
	} {
		if _, err := ParseName(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseName(%q): %v, want %q", c.in, err, c.want)
		}
	}
}

// A name's text reads back to the same name: what an episode records
// rebuilds the task it was played on.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"mathchat", "mathchat:easy", "mathchat:h8:ledger", "docedit:easy", "mathchat:nocalc:ledger",
		"mathchat:data=/x#sha256:" + strings.Repeat("0", 64), "docedit:data=sha256:" + strings.Repeat("f", 64), "mathchat:data=a:b", "docedit:easy:quote:leak=2x:syc=0x:reward=acceptance"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseName(s)
		if err != nil {
			return
		}
		m, err := ParseName(n.String())
		if err != nil {
			t.Fatalf("ParseName(%q) = %q, which does not parse: %v", s, n.String(), err)
		}
		if m.String() != n.String() || m.Family != n.Family || m.Level != n.Level || strings.Join(m.Options, ",") != strings.Join(n.Options, ",") || m.Data.SHA256 != n.Data.SHA256 {
			t.Fatalf("ParseName(%q) = %+v, its text %q reads back as %+v", s, n, n.String(), m)
		}
	})
}

func TestOnlyDoses(t *testing.T) {
	for opts, want := range map[string]bool{"leak=2x": true, "leak=0x:syc=2x": true, AcceptanceReward: true, "quote": false, "": false, "leak=2x:ledger": false} {
		if got := OnlyDoses(opts); got != want {
			t.Errorf("OnlyDoses(%q) = %v, want %v", opts, got, want)
		}
	}
}

func TestNaiveOnly(t *testing.T) {
	for opts, want := range map[string]bool{"leak=2x": true, "leak=0x:syc=2x": true, "syc=0x": true, AcceptanceReward: false, "leak=2x:" + AcceptanceReward: false, "quote": false, "": false} {
		if got := NaiveOnly(opts); got != want {
			t.Errorf("NaiveOnly(%q) = %v, want %v", opts, got, want)
		}
	}
}

// A dose joins the name's own options in the family's order, and the
// data stays last: building the name by hand ("NAME:" + dose) put a dose
// after the data option, a name ParseName refuses.
func TestWithDoses(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	cases := []struct{ name, opts, want string }{
		{"docedit:quote", "leak=2x", "docedit:quote:leak=2x"},
		{"docedit", "syc=0x:leak=2x", "docedit:leak=2x:syc=0x"},
		{"mathchat:easy:data=sha256:" + hash, "reward=acceptance", "mathchat:easy:reward=acceptance:data=sha256:" + hash},
	}
	for _, c := range cases {
		got, err := WithDoses(c.name, c.opts)
		if err != nil || got != c.want {
			t.Errorf("WithDoses(%q, %q) = %q, %v; want %q", c.name, c.opts, got, err, c.want)
		}
	}
	for _, opts := range []string{"quote", "", "leak=2x:ledger"} {
		if got, err := WithDoses("docedit", opts); err == nil {
			t.Errorf("WithDoses(docedit, %q) = %q, want an error", opts, got)
		}
	}
}

// The simulator's ledger joins a name in the family's order and before
// its data, once; a family without one, and a name that does not parse,
// are left alone.
func TestWithSimLedger(t *testing.T) {
	hash := strings.Repeat("cd", 32)
	cases := []struct{ name, want string }{
		{"mathchat", "mathchat:userledger"},
		{"mathchat:easy:leak=2x", "mathchat:easy:userledger:leak=2x"},
		{"mathchat:ledger:nocalc", "mathchat:nocalc:ledger:userledger"},
		{"support:easy:userledger", "support:easy:userledger"},
		{"docedit:easy:quote", "docedit:easy:userledger:quote"},
		{"mathchat:easy:data=sha256:" + hash, "mathchat:easy:userledger:data=sha256:" + hash},
		{"chess", "chess"},
	}
	for _, c := range cases {
		got := WithSimLedger(c.name)
		if got != c.want {
			t.Errorf("WithSimLedger(%q) = %q, want %q", c.name, got, c.want)
		}
		if c.name != "chess" {
			if _, err := ParseName(got); err != nil {
				t.Errorf("WithSimLedger(%q) = %q, which does not parse: %v", c.name, got, err)
			}
		}
		// WithoutSimLedger takes it off again, the rest in its order.
		if back, want := WithoutSimLedger(got), strings.Replace(got, ":userledger", "", 1); back != want {
			t.Errorf("WithoutSimLedger(%q) = %q, want %q", got, back, want)
		}
	}
}

// The simulator's mends are on by default where they were measured to
// help, whatever the level or options, and off for docedit.
func TestSimMendsOf(t *testing.T) {
	for name, want := range map[string]bool{
		"mathchat": true, "mathchat:easy:nocalc": true, "support:easy": true, "support:userledger": true,
		"docedit": false, "docedit:easy:quote": false, "chess": false,
	} {
		if got := SimMendsOf(name); got != want {
			t.Errorf("SimMendsOf(%q) = %v, want %v", name, got, want)
		}
	}
}
