// Package spec turns the agent and user names used on the command line
// ("scripted:careful", "human", "naive", ...) into the objects that play
// them, so every command reads them the same way.
package spec

import (
	"fmt"
	"strings"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task"
)

// Agent builds the agent named by s for task t.
//
//	scripted:PROFILE   one of the task's scripted reference agents
//	lm:DIR             a policy checkpoint trained by calibrl
//	remote:MODEL       a model behind an OpenAI-compatible endpoint (spec/remote.go)
func Agent(t task.Task, s string) (dialog.Agent, error) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "remote":
		return remoteAgent(s)
	case "lm":
		m, _, err := loadChat(s, arg, checkpoint.RolePolicy)
		if err != nil {
			return nil, err
		}
		return &chatlm.Agent{Model: m, Gen: EvalGen(), Tool: dialog.ToolOf(t)}, nil
	case "scripted":
		if arg == "" {
			return nil, fmt.Errorf("agent %q: name a profile, e.g. scripted:%s (profiles: %s)", s, first(t.Profiles()), strings.Join(t.Profiles(), ", "))
		}
		a, err := t.Agent(arg)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w", s, err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want scripted:PROFILE with a profile of %s: %s; lm:DIR; or remote:MODEL)", s, t.Name(), strings.Join(t.Profiles(), ", "))
}

// Agents splits a comma-separated list of agent names.
func Agents(s string) []string {
	var names []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// User builds the user named by s for task t.
//
//	human                   the task's held-out proxy of a real person
//	naive                   the task's prompted-style simulator with its artifacts
//	learned:DIR             a calibrated simulator checkpoint (train-sim)
//	learned-nocontext:DIR   the same without the oracle context (the ablation)
//	learned+copy:DIR        a calibrated simulator held to the facts its
//	                        problem holds, as its task copies them
//	                        (chatlm.CopyOf: mathchat's numbers, support's
//	                        whole values)
//	learned+copy=KIND:DIR   the same with a copy named: numbers or values
//	                        (dialog.Copy)
//	remote:MODEL            an LLM behind an OpenAI-compatible endpoint, role-playing from the oracle context
func User(t task.Task, s string) (dialog.User, error) {
	name, arg, _ := strings.Cut(s, ":")
	name, opts, _ := strings.Cut(name, "+")
	kind, err := dialog.ParseUserKind(name)
	if err != nil {
		return nil, fmt.Errorf("unknown user %q (want %s)", s, userSpecs)
	}
	if opts != "" && kind != dialog.Learned && kind != dialog.LearnedNoContext {
		return nil, fmt.Errorf("user %q: +%s: only a learned simulator takes options (learned+copy:DIR)", s, opts)
	}
	switch kind {
	case dialog.Remote:
		return remoteUser(s)
	case dialog.Human, dialog.Naive:
		if arg != "" {
			break
		}
		u, err := t.User(kind)
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", s, err)
		}
		return u, nil
	case dialog.Learned, dialog.LearnedNoContext:
		oracle := kind == dialog.Learned
		u, err := learnedUser(t, s, arg, &oracle)
		if err != nil {
			return nil, err
		}
		for _, o := range strings.Split(opts, "+") {
			switch o {
			case "":
			case CopyOption:
				u.CopyAs(t, chatlm.CopyOf(t))
			default:
				kind, ok := strings.CutPrefix(o, CopyOption+"=")
				if !ok {
					return nil, fmt.Errorf("user %q: unknown option %q (known: %s, %s=numbers, %s=values)", s, o, CopyOption, CopyOption, CopyOption)
				}
				c, err := dialog.ParseCopy(kind)
				if err != nil {
					return nil, fmt.Errorf("user %q: option %q: %w", s, o, err)
				}
				u.CopyAs(t, c)
			}
		}
		return u, nil
	}
	return nil, fmt.Errorf("unknown user %q (want %s)", s, userSpecs)
}

// CopyOption is the learned simulator's option that holds what it states
// to what its problem holds (learned+copy:DIR, learned+copy=values:DIR).
const CopyOption = "copy"

// userSpecs names the user specs for errors.
const userSpecs = "human, naive, learned:DIR, learned-nocontext:DIR, learned+copy[=numbers|values]:DIR or remote:MODEL"

// LearnedUser loads the simulator checkpoint in dir (train-sim's) as a
// user of task t, conditioned as it was trained: on the oracle context
// unless its calibrl.json says it was fitted without it, shown the task's
// check when it was trained with it, and shown the task's notes
// (chatlm.UserNotesOf) when it was fitted with them, which t must then
// show, and must not show when it was fitted without. A folder without
// calibrl.json is read as a calibrated simulator (the oracle context, no
// check, no notes).
func LearnedUser(t task.Task, dir string) (*chatlm.User, error) {
	return learnedUser(t, dir, dir, nil)
}

// learnedUser loads the simulator in dir for the user named s. oracle,
// when set, is the conditioning s asks for, which the checkpoint's
// metadata must agree with; nil takes the metadata's.
func learnedUser(t task.Task, s, dir string, oracle *bool) (*chatlm.User, error) {
	m, meta, err := loadChat(s, dir, checkpoint.RoleSimulator)
	if err != nil {
		return nil, err
	}
	u := &chatlm.User{Model: m, Oracle: oracle == nil || *oracle, Gen: DefaultGen()}
	if meta != nil {
		if oracle == nil {
			u.Oracle = meta.Oracle
		}
		if meta.Oracle != u.Oracle {
			want := dialog.Learned
			if !meta.Oracle {
				want = dialog.LearnedNoContext
			}
			return nil, fmt.Errorf("user %q: %s was trained with oracle context %v: use %s:%s", s, dir, meta.Oracle, want, dir)
		}
		if meta.Judged {
			u.Judge = chatlm.TaskJudge(t)
		}
		if err := userNotes(t, s, dir, meta, u); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// userNotes joins the task's notes to u's judge when meta says the
// simulator was fitted with them. A simulator fitted with notes and played
// without them (or the reverse) reads a view it never saw: its replies
// would not measure it, so the mismatch is an error naming what to do.
func userNotes(t task.Task, s, dir string, meta *checkpoint.Meta, u *chatlm.User) error {
	notes := chatlm.UserNotesOf(t)
	shows := notes != nil && meta.Oracle // a blind simulator never sees notes
	switch {
	case meta.UserNotes && !shows:
		return fmt.Errorf("user %q: %s was fitted with the task's notes to the simulator (:%s; its logs' task %s), but task %s shows none: play it on a task with :%s, or fit a simulator on logs of %s",
			s, dir, task.WithUserLedger, meta.Task, t.Spec(), task.WithUserLedger, t.Spec())
	case !meta.UserNotes && shows:
		return fmt.Errorf("user %q: %s was fitted without the task's notes to the simulator (:%s; its logs' task %s), but task %s shows them: play it on a task without :%s, or fit a simulator on logs of %s",
			s, dir, task.WithUserLedger, meta.Task, t.Spec(), task.WithUserLedger, t.Spec())
	case meta.UserNotes:
		u.Judge = chatlm.JoinJudges(u.Judge, notes)
	}
	return nil
}

// DefaultGen is how checkpoint users sample: temperature 1 with a nucleus
// of 0.9 (Holtzman et al. 2020), up to 96 new tokens a turn. The nucleus
// cuts the long tail of a small model's distribution, where its copying
// errors live (a number of the problem off by a digit), while keeping the
// users' own variety (templates, typos, partial answers), which carries
// real probability mass.
func DefaultGen() chatlm.GenConfig {
	return chatlm.GenConfig{MaxNewTokens: 96, Temperature: 1, TopP: 0.9}
}

// EvalGen is how checkpoint agents (lm:DIR) play when evaluated: greedy,
// as the RL trainers' reward-hacking monitor plays, so an evaluation is a
// function of the weights and the users' randomness alone.
func EvalGen() chatlm.GenConfig {
	return chatlm.GenConfig{MaxNewTokens: 96, Temperature: 0, TopP: 1}
}

// Policy loads the policy checkpoint in dir (train-policy's), refusing a
// simulator's.
func Policy(dir string) (*chatlm.Model, error) {
	m, _, err := loadChat("lm:"+dir, dir, checkpoint.RolePolicy)
	return m, err
}

// loadChat loads a chat checkpoint for spec s, checking it was trained for
// role. meta is its calibrl.json, nil for a folder written before there
// was one; a calibrl.json that cannot be read whole is an error, never a
// checkpoint played without the role and conditioning it names.
func loadChat(s, dir, role string) (*chatlm.Model, *checkpoint.Meta, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("%q: name the checkpoint folder after the colon", s)
	}
	meta, ok, err := checkpoint.ReadOptional(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%q: %w", s, err)
	}
	// A legacy folder's role, when its layout tells it (an RL run's is
	// a policy), must match too.
	if meta.Role != "" && meta.Role != role {
		return nil, nil, fmt.Errorf("%q: %s is a %s model, not a %s model", s, dir, meta.Role, role)
	}
	m, _, err := chatlm.Load(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%q: %w", s, err)
	}
	if !ok {
		return m, nil, nil
	}
	return m, &meta, nil
}

func first(xs []string) string {
	if len(xs) == 0 {
		return "PROFILE"
	}
	return xs[0]
}
