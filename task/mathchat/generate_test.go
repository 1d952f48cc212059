package mathchat

import (
	"errors"
	"math/big"
	"reflect"
	"testing"
)

func newTask(t testing.TB, edit func(*Config)) *Task {
	t.Helper()
	cfg := DefaultConfig()
	if edit != nil {
		edit(&cfg)
	}
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestFamiliesSolvability checks, for every family, that the full problem
// solves to the oracle's truth, that the opening (hidden facts withheld)
// does not solve, and that the answer depends on every hidden number:
// changing it alone changes the answer.
func TestFamiliesSolvability(t *testing.T) {
	l, err := grammar()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range FamilyNames() {
		t.Run(fam, func(t *testing.T) {
			tk := newTask(t, func(c *Config) { c.Families = []string{fam} })
			for i := 0; i < 150; i++ {
				o, _, err := tk.Instance("train", i)
				if err != nil {
					t.Fatal(err)
				}
				if o.Family != fam {
					t.Fatalf("%s: family %s, want %s", o.ID, o.Family, fam)
				}
				got, _, err := Solve(o.Instruction)
				if err != nil || FormatRat(got) != o.Truth {
					t.Fatalf("%s: Solve(instruction) = %v, %v; want %s\n%s", o.ID, got, err, o.Truth, o.Instruction)
				}
				if _, _, err := Solve(o.Opening); !errors.Is(err, ErrMissing) {
					t.Fatalf("%s: Solve(opening) err = %v, want ErrMissing\n%s", o.ID, err, o.Opening)
				}
				hidden := o.HiddenFacts()
				if len(hidden) == 0 {
					t.Fatalf("%s: no hidden facts", o.ID)
				}
				truth, _ := ParseTruth(o.Truth)
				for _, h := range hidden {
					if !dependsOn(l, o.Instruction, h.Key, truth) {
						t.Errorf("%s: answer does not depend on hidden fact %q", o.ID, h.Text)
					}
					for _, n := range Numbers(o.Opening) {
						if FormatRat(n.Value) == h.Value {
							t.Errorf("%s: opening shows hidden value %s: %s", o.ID, h.Value, o.Opening)
						}
					}
				}
			}
		})
	}
}

// dependsOn reports whether changing the number of statement key alone
// (by +1..+12) changes the answer. Twelve steps cross every bag size the
// remainder family uses.
func dependsOn(l *language, text, key string, truth *big.Rat) bool {
	for d := int64(1); d <= 12; d++ {
		p := l.read(text)
		found := false
		for _, s := range p.stmts {
			if s.key() == key {
				s.val = new(big.Rat).Add(s.val, big.NewRat(d, 1))
				found = true
			}
		}
		if !found {
			return false
		}
		v, err := l.solve(p, &calc{slipAt: -1})
		if err == nil && v.Cmp(truth) != 0 {
			return true
		}
	}
	return false
}

// TestKnobs generates problems under each knob's extremes.
func TestKnobs(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"steps1", func(c *Config) { c.Steps = 1 }},
		{"steps6", func(c *Config) { c.Steps = 6 }},
		{"small", func(c *Config) { c.MaxNumber = 5; c.MaxAnswer = 50 }},
		{"large", func(c *Config) { c.MaxNumber = 500; c.MaxAnswer = 100000 }},
		{"nodistract", func(c *Config) { c.Distractors = 0 }},
		{"alldistract", func(c *Config) { c.Distractors = len(distractors) }},
		{"hidden3", func(c *Config) { c.MinHidden, c.MaxHidden = 3, 3 }},
		{"fractions", func(c *Config) { c.Fractions = true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, fam := range FamilyNames() {
				tk := newTask(t, func(cfg *Config) { c.edit(cfg); cfg.Families = []string{fam} })
				for i := 0; i < 20; i++ {
					o, _, err := tk.Instance("test", i)
					if err != nil {
						t.Fatalf("%s: %v", fam, err)
					}
					if got, _, err := Solve(o.Instruction); err != nil || FormatRat(got) != o.Truth {
						t.Fatalf("%s: solve %v %v, want %s", o.ID, got, err, o.Truth)
					}
				}
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Families = []string{"nope"} },
		func(c *Config) { c.Steps = 0 },
		func(c *Config) { c.Steps = 7 },
		func(c *Config) { c.MaxNumber = 1 },
		func(c *Config) { c.MaxAnswer = 10 },
		func(c *Config) { c.Distractors = -1 },
		func(c *Config) { c.MinHidden = 0 },
		func(c *Config) { c.MinHidden, c.MaxHidden = 3, 2 },
		func(c *Config) { c.MaxHidden = MaxFacts + 1 },
		func(c *Config) { c.Items = -1 },
		func(c *Config) { c.Items = MaxItems + 1 },
		func(c *Config) { c.SlipRate = 2 },
		func(c *Config) { c.Naive.Leakage = -0.1 },
	}
	for i, edit := range bad {
		c := DefaultConfig()
		edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("case %d: got nil error, want one", i)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

// TestSplitsDisjoint checks that the first few thousand instances of the
// two splits share no problem text.
func TestSplitsDisjoint(t *testing.T) {
	tk := newTask(t, nil)
	const n = 2500
	seen := map[string]int{}
	for i := 0; i < n; i++ {
		o, _, err := tk.Instance("train", i)
		if err != nil {
			t.Fatal(err)
		}
		seen[o.Instruction] = i
	}
	for i := 0; i < n; i++ {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := seen[o.Instruction]; ok {
			t.Fatalf("test/%d equals train/%d: %s", i, j, o.Instruction)
		}
	}
	if len(seen) < n*9/10 {
		t.Errorf("only %d distinct train problems in %d", len(seen), n)
	}
}

func TestInstanceDeterministic(t *testing.T) {
	a, b := newTask(t, nil), newTask(t, nil)
	for _, split := range []string{"train", "test"} {
		for i := 0; i < 50; i++ {
			o1, v1, err1 := a.Instance(split, i)
			o2, v2, err2 := b.Instance(split, i)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%s/%d differs between calls", split, i)
			}
		}
	}
	o1, _, _ := a.Instance("train", 3)
	c := newTask(t, func(c *Config) { c.Seed = 99 })
	o2, _, _ := c.Instance("train", 3)
	if o1.Instruction == o2.Instruction {
		t.Errorf("Seed 99 gave the same problem as seed 0")
	}
	if _, _, err := a.Instance("dev", 0); err == nil {
		t.Errorf("split dev: got nil error")
	}
	if _, _, err := a.Instance("train", -1); err == nil {
		t.Errorf("index -1: got nil error")
	}
}

// TestPersonaRanges checks the drawn personas stay in their documented
// ranges.
func TestPersonaRanges(t *testing.T) {
	tk := newTask(t, nil)
	for i := 0; i < 300; i++ {
		o, _, _ := tk.Instance("test", i)
		p := o.Persona
		if p.Patience < 3 || p.Patience > 8 || p.Verbosity < 0 || p.Verbosity > 1 || p.TypoRate < 0 || p.TypoRate > 0.15 || p.Clarity < 0.6 || p.Clarity > 1 {
			t.Fatalf("%s: persona %+v out of range", o.ID, p)
		}
	}
}

func TestFactKeysUnique(t *testing.T) {
	tk := newTask(t, nil)
	for i := 0; i < 500; i++ {
		o, _, _ := tk.Instance("train", i)
		seen := map[string]bool{}
		for _, f := range o.Facts {
			if seen[f.Key] {
				t.Fatalf("%s: fact key %s twice", o.ID, f.Key)
			}
			seen[f.Key] = true
		}
	}
}

func BenchmarkInstance(b *testing.B) {
	tk := newTask(b, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, err := tk.Instance("train", i); err != nil {
			b.Fatal(err)
		}
	}
}
