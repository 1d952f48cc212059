package chatlm_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
)

// An untrained simulator states numbers at random; with CopyNumbers every
// number of every turn is one its problem holds (the facts check's own
// reading), greedy and sampled, and the same seeds give the same turns.
func TestUserCopiesTheNumbersItHolds(t *testing.T) {
	eps := chatlmtest.AddEpisodes(24, 3)
	m := chatlmtest.TinyModel(t, eps)
	play := func(copyNumbers bool, temp float64) (stated, held int, turns []string) {
		c := dialog.CopyOff
		if copyNumbers {
			c = dialog.CopyNumbers
		}
		opens, replies := playTwoTurns(t, m, eps, c, temp)
		for i := range eps {
			known := eps[i].Oracle.KnownNumbers()
			for _, text := range []string{opens[i], replies[i]} {
				if text == eps[i].Oracle.Opening {
					continue // the fallback of an unusable opening, not sampled
				}
				turns = append(turns, text)
				for _, n := range dialog.NumberPattern.FindAllString(text, -1) {
					stated++
					n = dialog.CanonNumber(n)
					if known[n] || known["-"+strings.TrimPrefix(n, "-")] || known[strings.TrimPrefix(n, "-")] {
						held++
					}
				}
			}
		}
		return stated, held, turns
	}
	if stated, held, _ := play(false, 1); stated == 0 || held == stated {
		t.Fatalf("without the constraint: %d of %d stated numbers held; the test needs an untrained model that misstates", held, stated)
	}
	for _, temp := range []float64{0, 1} {
		stated, held, turns := play(true, temp)
		if held != stated {
			t.Errorf("temperature %v: %d of %d stated numbers held, want all: %q", temp, held, stated, turns)
		}
		if temp == 1 && stated == 0 {
			t.Errorf("sampled: no number stated at all; the constraint must allow held ones")
		}
		_, _, again := play(true, temp)
		if strings.Join(again, "\n") != strings.Join(turns, "\n") {
			t.Errorf("temperature %v: the same seeds gave other turns", temp)
		}
	}
}

// With CopyValues every value of every turn (a run with a digit or an
// '@') is a whole one the problem holds, greedy and sampled: an untrained
// simulator states others without it. The last run of a turn may be a
// held value's beginning, cut by the length limit.
func TestUserCopiesTheWholeValuesItHolds(t *testing.T) {
	eps := chatlmtest.AddEpisodes(24, 3)
	m := chatlmtest.TinyModel(t, eps)
	play := func(c dialog.Copy, temp float64) (stated, held int, turns []string) {
		opens, replies := playTwoTurns(t, m, eps, c, temp)
		for i := range eps {
			values := eps[i].Oracle.HeldValues()
			for _, text := range []string{opens[i], replies[i]} {
				if text == eps[i].Oracle.Opening {
					continue
				}
				turns = append(turns, text)
				runs := dialog.ValueRun.FindAllStringIndex(text, -1)
				for k, loc := range runs {
					r := text[loc[0]:loc[1]]
					if !dialog.IsValue(r) {
						continue
					}
					stated++
					v := dialog.TrimValue(r)
					cut := k == len(runs)-1 && loc[1] == len(text)
					for h := range values {
						if h == v || cut && strings.HasPrefix(h, strings.TrimLeft(r, "._+-")) {
							held++
							break
						}
					}
				}
			}
		}
		return stated, held, turns
	}
	if stated, held, _ := play(dialog.CopyOff, 1); stated == 0 || held == stated {
		t.Fatalf("without the constraint: %d of %d stated values held; the test needs an untrained model that misstates", held, stated)
	}
	for _, temp := range []float64{0, 1} {
		stated, held, turns := play(dialog.CopyValues, temp)
		if held != stated {
			t.Errorf("temperature %v: %d of %d stated values held, want all: %q", temp, held, stated, turns)
		}
		if temp == 1 && stated == 0 {
			t.Errorf("sampled: no value stated at all; the constraint must allow held ones")
		}
	}
}

// playTwoTurns has an untrained simulator copying as c says open each
// episode and answer an agent's question, seeded per episode.
func playTwoTurns(t *testing.T, m *chatlm.Model, eps []dialog.Episode, c dialog.Copy, temp float64) (opens, replies []string) {
	t.Helper()
	u := &chatlm.User{Model: m, Oracle: true, Copy: c, Gen: chatlm.GenConfig{MaxNewTokens: 48, Temperature: temp, TopP: 1}}
	var sessions []dialog.UserSession
	for i := range eps {
		sessions = append(sessions, u.NewSession(&eps[i].Oracle, rand.New(rand.NewPCG(uint64(i), 7))))
	}
	opens, err := u.OpenBatch(context.Background(), sessions)
	if err != nil {
		t.Fatal(err)
	}
	histories := make([][]dialog.Message, len(eps))
	for i, o := range opens {
		histories[i] = []dialog.Message{{Role: dialog.RoleUser, Content: o}, {Role: dialog.RoleAssistant, Content: "is it 12.5 or 3/7?"}}
	}
	replies, _, err = u.ReplyBatch(context.Background(), sessions, histories)
	if err != nil {
		t.Fatal(err)
	}
	return opens, replies
}
