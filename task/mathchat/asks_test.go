package mathchat

import "testing"

// TestAsksResolve checks the grammar's questions against the users' cue
// matching: on thousands of generated problems, the careful question
// about every number (hidden or not) is read as asking about exactly that
// fact, so scripted agents and users agree on what was asked.
func TestAsksResolve(t *testing.T) {
	tk, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := grammar()
	bad := 0
	for i := 0; i < 2000 && bad < 10; i++ {
		o, _, err := tk.Instance("train", i)
		if err != nil {
			t.Fatal(err)
		}
		p := l.read(o.Instruction)
		k := 0
		for _, s := range p.stmts {
			if s.pat.num == numNone {
				continue
			}
			if !s.pat.distract {
				r := readAgent(s.ask(), o.Facts)
				if r.kind != intentAskFact || r.fact != k {
					bad++
					t.Errorf("%s: ask %q read as kind %d fact %d, want fact %d (%s)", o.ID, s.ask(), r.kind, r.fact, k, o.Facts[k].Text)
				}
			}
			k++
		}
	}
}
