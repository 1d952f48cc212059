package spec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/sft"
	"github.com/calibrl/calibrl/task"
	"github.com/calibrl/calibrl/train"
)

func TestNamesBuildOrExplain(t *testing.T) {
	tk, err := task.Lookup("mathchat")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tk.Profiles() {
		if _, err := Agent(tk, "scripted:"+p); err != nil {
			t.Errorf("scripted:%s: %v", p, err)
		}
	}
	for _, u := range []string{"human", "naive"} {
		if _, err := User(tk, u); err != nil {
			t.Errorf("user %s: %v", u, err)
		}
	}
	bad := []struct {
		agent bool
		name  string
		want  string
	}{
		{true, "scripted:", "name a profile"},
		{true, "scripted:wizard", "wizard"},
		{true, "robot", "unknown agent"},
		{true, "lm:", "name the checkpoint folder"},
		{true, "lm:/nonexistent/x", "/nonexistent/x"},
		{false, "human:extra", "unknown user"},
		{false, "learned:", "name the checkpoint folder"},
		{false, "alien", "unknown user"},
		{false, "naive+copy", "only a learned simulator takes options"},
		{false, "human+copy", "only a learned simulator takes options"},
	}
	for _, b := range bad {
		var err error
		if b.agent {
			_, err = Agent(tk, b.name)
		} else {
			_, err = User(tk, b.name)
		}
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.name, err, b.want)
		}
	}
	if got := Agents(" scripted:a, b ,,c"); strings.Join(got, "|") != "scripted:a|b|c" {
		t.Errorf("Agents split = %v", got)
	}
}

// A simulator trained with the task's check plays with it; one trained
// without does not; the ablation's name must match the checkpoint.
func TestLearnedUserPlaysAsTrained(t *testing.T) {
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	for _, judged := range []bool{true, false} {
		var judge chatlm.Judge
		if judged {
			judge = chatlm.TaskJudge(tk)
		}
		dir := fitSim(t, tk, true, judge)
		u, err := User(tk, "learned:"+dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.(*chatlm.User).Judge != nil; got != judged {
			t.Errorf("trained with the check %v, plays with it %v", judged, got)
		}
		if _, err := User(tk, "learned-nocontext:"+dir); err == nil || !strings.Contains(err.Error(), "learned:") {
			t.Errorf("learned-nocontext on an oracle-context simulator: %v", err)
		}
		if c := u.(*chatlm.User).Copy; c != dialog.CopyOff {
			t.Errorf("learned:DIR copies %v; only learned+copy:DIR copies", c)
		}
		cu, err := User(tk, "learned+copy:"+dir)
		if err != nil || cu.(*chatlm.User).Copy != dialog.CopyNumbers || (cu.(*chatlm.User).Judge != nil) != judged {
			t.Errorf("learned+copy:DIR: %v, want the same simulator copying the numbers it holds (mathchat's copy)", err)
		}
		vu, err := User(tk, "learned+copy=values:"+dir)
		if err != nil || vu.(*chatlm.User).Copy != dialog.CopyValues {
			t.Errorf("learned+copy=values:DIR: %v, want the simulator copying whole values", err)
		}
		if _, err := User(tk, "learned+paste:"+dir); err == nil || !strings.Contains(err.Error(), `unknown option "paste"`) {
			t.Errorf("learned+paste: %v, want the unknown option named", err)
		}
		if _, err := User(tk, "learned+copy=words:"+dir); err == nil || !strings.Contains(err.Error(), `unknown copy "words"`) {
			t.Errorf("learned+copy=words: %v, want the unknown kind named", err)
		}
	}
}

// fitSim fits a two-step simulator on a few conversations of tk.
func fitSim(t *testing.T, tk task.Task, oracle bool, judge chatlm.Judge) string {
	t.Helper()
	return fitSimNotes(t, tk, oracle, judge, nil)
}

// fitSimNotes is fitSim showing the simulator notes as well
// (sft.Config.UserNotes).
func fitSimNotes(t *testing.T, tk task.Task, oracle bool, judge, notes chatlm.Judge) string {
	t.Helper()
	human, _ := tk.User("human")
	careful, _ := tk.Agent("careful")
	eps, err := rollout.Run(context.Background(), tk, careful, human, rollout.Config{Split: "train", Instances: 6, Seed: 1, MaxTurns: 4, AgentName: "scripted:careful", UserName: "human"})
	if err != nil {
		t.Fatal(err)
	}
	sc := train.DefaultSFTConfig()
	sc.Steps, sc.BatchSize, sc.EvalEvery, sc.CheckpointEvery, sc.Seed = 2, 2, 1, 1, 1
	dir := filepath.Join(t.TempDir(), "sim")
	cfg := sft.Config{Model: lm.Config{Context: 256, Dim: 16, Layers: 1, Heads: 2}, SFT: sc, Vocab: 300, Oracle: oracle, Judge: judge, UserNotes: notes}
	if _, err := sft.Simulator(context.Background(), eps, cfg, dir, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

// LearnedUser plays a simulator folder as its metadata says it was
// trained: what "learned:DIR" builds for a calibrated simulator, what
// "learned-nocontext:DIR" builds for the ablation.
func TestLearnedUserFromAFolder(t *testing.T) {
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		oracle bool
		judge  chatlm.Judge
		name   string
	}{{true, chatlm.TaskJudge(tk), "learned:"}, {false, nil, "learned-nocontext:"}} {
		dir := fitSim(t, tk, c.oracle, c.judge)
		got, err := LearnedUser(tk, dir)
		if err != nil {
			t.Fatal(err)
		}
		u, err := User(tk, c.name+dir)
		if err != nil {
			t.Fatal(err)
		}
		want := u.(*chatlm.User)
		if got.Oracle != c.oracle || got.Oracle != want.Oracle || (got.Judge != nil) != (c.judge != nil) || (want.Judge != nil) != (c.judge != nil) || got.Gen.Temperature != want.Gen.Temperature || got.Gen.TopP != want.Gen.TopP {
			t.Errorf("trained with oracle %v: LearnedUser plays oracle %v, judged %v, gen %+v; %s%s: %v, %v, %+v",
				c.oracle, got.Oracle, got.Judge != nil, got.Gen, c.name, dir, want.Oracle, want.Judge != nil, want.Gen)
		}
	}
	if _, err := LearnedUser(tk, filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a folder without a checkpoint: want an error")
	}
}

// A checkpoint whose calibrl.json cannot be read whole is refused by every
// player, with an error naming the file and what is wrong: played anyway,
// a simulator would lose the check it was trained with and a policy its
// role check. A folder without calibrl.json still plays (it predates it).
func TestTornCheckpointMetaRefused(t *testing.T) {
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	dir := fitSim(t, tk, true, chatlm.TaskJudge(tk))
	meta := filepath.Join(dir, checkpoint.MetaFile)
	good, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{"{x", "malformed JSON"},
		{`{"role": "user", "task": "mathchat:easy", "oracle": "yes"}`, `field "oracle"`},
		{`{"role": "robot", "task": "mathchat:easy", "oracle": true}`, `field "role"`},
		{`{"role": "user", "task": "mathchat:easy"}`, `field "oracle": missing`},
		{`{"role": "user", "task": "mathchat:easy:userledger", "oracle": false, "user_notes": true}`, `field "user_notes"`},
		{string(good[:len(good)/2]), "malformed JSON"},
	} {
		if err := os.WriteFile(meta, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"learned:" + dir, "lm:" + dir} {
			var err error
			if strings.HasPrefix(name, "lm:") {
				_, err = Agent(tk, name)
			} else {
				_, err = User(tk, name)
			}
			if err == nil || !strings.Contains(err.Error(), meta) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s with calibrl.json %q: %v, want an error naming %s and %q", name, c.body, err, meta, c.want)
			}
		}
		if _, _, err := chatlm.Load(dir); err == nil {
			t.Errorf("chatlm.Load with calibrl.json %q: no error", c.body)
		}
	}
	// A fit's folder whose calibrl.json is gone is refused, as a user and
	// as a policy: a simulator must never play as an lm: agent.
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	if _, err := Agent(tk, "lm:"+dir); !errors.Is(err, checkpoint.ErrNoMeta) {
		t.Errorf("lm: a simulator's fit without calibrl.json: %v, want checkpoint.ErrNoMeta", err)
	}
	if _, err := User(tk, "learned:"+dir); !errors.Is(err, checkpoint.ErrNoMeta) || !strings.Contains(err.Error(), dir) {
		t.Errorf("learned: a fit without calibrl.json: %v, want checkpoint.ErrNoMeta naming %s", err, dir)
	}
	// The documented legacy layouts still play: a bare model folder (no
	// trainer result) as either role, an RL run's model as a policy only.
	if err := os.Remove(filepath.Join(dir, checkpoint.SFTResultFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := User(tk, "learned:"+dir); err != nil {
		t.Errorf("a bare model folder (legacy) as a user: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "grpo_result.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := User(tk, "learned:"+dir); err == nil || !strings.Contains(err.Error(), "assistant model") {
		t.Errorf("an RL run's model as a user: %v, want it refused as a policy", err)
	}
	if _, err := Agent(tk, "lm:"+dir); err != nil {
		t.Errorf("an RL run's model as a policy: %v", err)
	}
}

// A simulator fitted with the task's notes (:userledger, in every family) plays
// with them, as its fit showed them; played on a task without them, or one
// fitted without them played on a task with them, it is refused with an
// error naming its folder and what to do. The ablation without the oracle
// context never sees notes, so it plays on either. Without the notes the
// metadata is written as before (no user_notes field).
func TestLearnedUserPlaysWithTheNotesItWasFittedWith(t *testing.T) {
	for _, name := range []string{"mathchat:h2", "support:easy", "docedit:easy"} {
		t.Run(name, func(t *testing.T) { learnedUserPlaysWithItsNotes(t, name) })
	}
}

func learnedUserPlaysWithItsNotes(t *testing.T, name string) {
	on, err := task.Lookup(name + ":" + task.WithUserLedger)
	if err != nil {
		t.Fatal(err)
	}
	off, err := task.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	notes := chatlm.UserNotesOf(on)
	withNotes := fitSimNotes(t, on, true, chatlm.TaskJudge(on), notes)
	without := fitSim(t, off, true, chatlm.TaskJudge(off))
	blind := fitSimNotes(t, on, false, nil, notes)
	for _, c := range []struct {
		dir   string
		notes bool
	}{{withNotes, true}, {without, false}, {blind, false}} {
		meta, err := checkpoint.Read(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(c.dir, checkpoint.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		if meta.UserNotes != c.notes || strings.Contains(string(raw), "user_notes") != c.notes {
			t.Errorf("%s: recorded notes %v in %s, want %v", c.dir, meta.UserNotes, raw, c.notes)
		}
	}

	u, err := LearnedUser(on, withNotes)
	if err != nil {
		t.Fatal(err)
	}
	careful, _ := on.Agent("careful")
	human, _ := on.User("human")
	eps, err := rollout.Run(context.Background(), on, careful, human, rollout.Config{Split: "test", Instances: 1, Seed: 1, MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	o, h := &eps[0].Oracle, eps[0].Messages
	got := chatlm.UserMessages(o, h, u.Oracle, u.Judge)
	want := chatlm.UserMessages(o, h, true, chatlm.JoinJudges(chatlm.TaskJudge(on), notes))
	if !reflect.DeepEqual(got, want) || !strings.Contains(fmt.Sprint(got), "Asked about: ") {
		t.Errorf("a simulator fitted with the notes plays with the view\n%+v\nwant\n%+v", got, want)
	}
	for _, c := range []struct {
		tk   task.Task
		dir  string
		want string
	}{
		{off, withNotes, "fitted with the task's notes"},
		{on, without, "fitted without the task's notes"},
	} {
		_, err := LearnedUser(c.tk, c.dir)
		if err == nil || !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), ":"+task.WithUserLedger) {
			t.Errorf("%s played on %s: %v, want an error naming it, %q and :%s", c.dir, c.tk.Spec(), err, c.want, task.WithUserLedger)
		}
	}
	for _, tk := range []task.Task{on, off} {
		if _, err := User(tk, "learned-nocontext:"+blind); err != nil {
			t.Errorf("the no-oracle-context ablation on %s: %v", tk.Spec(), err)
		}
	}
	// learned+copy copies as the task does: support whole values, the
	// others numbers.
	copyKind := dialog.CopyNumbers
	if strings.HasPrefix(name, "support") {
		copyKind = dialog.CopyValues
	}
	cu, err := User(on, "learned+copy:"+withNotes)
	if err != nil || cu.(*chatlm.User).Copy != copyKind {
		t.Errorf("learned+copy on %s: %v, want copy %v", on.Spec(), err, copyKind)
	}
	// Support's values begin with its names; the others' hold no words.
	if words := cu.(*chatlm.User).ValueWords; (len(words) > 0) != (copyKind == dialog.CopyValues) || copyKind == dialog.CopyValues && !slices.Contains(words, "lena") {
		t.Errorf("learned+copy on %s: value words %q", on.Spec(), words)
	}
}
