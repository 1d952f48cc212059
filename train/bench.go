package train

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
)

// RLBenchConfig sizes the interactive RL iteration benchmark: the shape
// of the quick preset's GRPO iteration (8 instances × G 8, minibatch 16,
// one pass) with conversations of a fixed shape.
type RLBenchConfig struct {
	Steps     int // timed iterations, after one untimed warm-up; default 3
	Instances int // instances per iteration; default 8
	Group     int // G, conversations per instance; default 8
	Turns     int // agent turns per conversation; default 4
	AgentTurn int // tokens of every agent turn, closing token included; default 16
	UserTurn  int // tokens of every user turn (the opening too); default 16
	MiniBatch int // sequences per gradient step; default 16
	Updates   int // passes over the batch; default 1
	Workers   int // goroutines; ≤ 0 means GOMAXPROCS
}

// DefaultRLBenchConfig returns the defaults documented on RLBenchConfig.
func DefaultRLBenchConfig() RLBenchConfig {
	return RLBenchConfig{Steps: 3, Instances: 8, Group: 8, Turns: 4, AgentTurn: 16, UserTurn: 16, MiniBatch: 16, Updates: 1}
}

// RLBenchResult is one benchmarked iteration: its size, the median
// seconds of each phase, and the trained sequences' tokens per second of
// each (iteration = rollout + log-prob + update).
type RLBenchResult struct {
	Name           string  `json:"name"`
	User           string  `json:"user"`
	Precision      string  `json:"precision"`        // the log-prob pass's and the update's (lm.ActivePrecision)
	SamplePrec     string  `json:"sample_precision"` // the rollout's (lm.ActiveSamplePrecision)
	Conversations  int     `json:"conversations"`
	Sequences      int     `json:"sequences"`
	SequenceTokens int     `json:"sequence_tokens"` // tokens of the trained sequences of one iteration
	SampledTokens  int     `json:"sampled_tokens"`  // tokens the policy and the user sampled
	IterationS     float64 `json:"iteration_s"`     // median
	RolloutS       float64 `json:"rollout_s"`       // conversations played and encoded
	LogprobS       float64 `json:"logprob_s"`       // old and reference log-probs
	UpdateS        float64 `json:"update_s"`        // the minibatch gradient steps
	IterTokensPerS float64 `json:"iteration_tokens_per_s"`
	RollTokensPerS float64 `json:"rollout_tokens_per_s"`
	LogpTokensPerS float64 `json:"logprob_tokens_per_s"`
	UpdTokensPerS  float64 `json:"update_tokens_per_s"`
	// The same figures as fractions of the plain training tokens/s they
	// are compared with (SetTrain; 0 until then).
	TrainTokensPerS float64 `json:"train_tokens_per_s"`
	IterFraction    float64 `json:"iteration_fraction_of_train"`
	RolloutFraction float64 `json:"rollout_fraction_of_train"`
	LogprobFraction float64 `json:"logprob_fraction_of_train"`
	UpdateFraction  float64 `json:"update_fraction_of_train"`
}

// SetTrain fills the fractions of plain training throughput train
// (tokens/s, measured in the same run).
func (r *RLBenchResult) SetTrain(train float64) {
	if train <= 0 {
		return
	}
	r.TrainTokensPerS = train
	r.IterFraction, r.RolloutFraction = r.IterTokensPerS/train, r.RollTokensPerS/train
	r.LogprobFraction, r.UpdateFraction = r.LogpTokensPerS/train, r.UpdTokensPerS/train
}

// Validate reports the first unusable field.
func (c RLBenchConfig) Validate() error {
	if c.Steps < 1 || c.Instances < 1 || c.Group < 2 || c.Turns < 1 || c.AgentTurn < 2 || c.UserTurn < 2 || c.MiniBatch < 1 || c.Updates < 1 {
		return fmt.Errorf("rl bench config %+v: sizes must be positive (group ≥ 2, turns ≥ 2 tokens)", c)
	}
	switch {
	case c.Steps > lm.MaxBenchSteps || c.Updates > lm.MaxBenchSteps:
		return fmt.Errorf("rl bench config: steps %d and updates %d, the limit is %d", c.Steps, c.Updates, lm.MaxBenchSteps)
	case c.Instances > MaxBenchConversations || c.Group > MaxBenchConversations/c.Instances:
		return fmt.Errorf("rl bench config: %d instances × group %d conversations, the limit is %d", c.Instances, c.Group, MaxBenchConversations)
	case c.Workers > lm.MaxWorkers:
		return fmt.Errorf("rl bench config: workers %d, the limit is %d", c.Workers, lm.MaxWorkers)
	}
	return nil
}

// MaxBenchConversations bounds one benchmarked iteration's conversations,
// each holding its KV caches (the default is 64).
const MaxBenchConversations = 4096

// BenchRL times interactive GRPO iterations of a policy of config cfg
// against a learned user simulator of the same config, both with fixed
// random weights. Every turn has a fixed length: the models may only
// write capital letters, which no merge of the benchmark's tokenizer
// touches (so every turn re-renders to the ids that were sampled, as a
// trained model's turns do), and close the turn with <|end|> at its last
// token; no one ends a conversation early. The figure is thus the same
// whatever the weights generate. Every iteration starts from the same
// weights and optimizer state.
func BenchRL(ctx context.Context, nc lm.NamedConfig, bc RLBenchConfig) (RLBenchResult, error) {
	cfg := nc.Config
	if err := bc.Validate(); err != nil {
		return RLBenchResult{}, err
	}
	tok, err := benchTokenizer(cfg.VocabSize)
	if err != nil {
		return RLBenchResult{}, err
	}
	letters := make([]int, 0, 26)
	for c := 'A'; c <= 'Z'; c++ {
		ids := tok.Encode(string(c))
		if len(ids) != 1 {
			return RLBenchResult{}, fmt.Errorf("rl bench: %q encodes to %d ids", c, len(ids))
		}
		letters = append(letters, ids[0])
	}
	end, _ := tok.SpecialID(tokenizer.End)
	shape := func(n int) chatlm.GenConfig {
		return chatlm.GenConfig{MaxNewTokens: n, Temperature: 1, TopP: 1, Allow: func(_ int, sofar []int) []int {
			if len(sofar) < n-1 {
				return letters
			}
			return []int{end}
		}}
	}
	build := func(seed uint64) (*chatlm.Model, error) {
		net, err := lm.New(cfg, rand.New(rand.NewPCG(seed, streamBenchWeights)))
		if err != nil {
			return nil, err
		}
		net.Workers = bc.Workers
		return chatlm.New(net, tok)
	}
	policy, err := build(1)
	if err != nil {
		return RLBenchResult{}, err
	}
	sim, err := build(2)
	if err != nil {
		return RLBenchResult{}, err
	}
	user := &chatlm.User{Model: sim, Oracle: true, Gen: shape(bc.UserTurn)}
	gc := DefaultRLConfig()
	gc.Iterations, gc.InstancesPerStep, gc.Group, gc.MaxTurns = 1, bc.Instances, bc.Group, bc.Turns
	gc.Gen, gc.MiniBatch, gc.UpdatesPerBatch, gc.MonitorEvery = shape(bc.AgentTurn), bc.MiniBatch, bc.Updates, 0
	gc.KeepFlatGroups = true // the whole batch trains, whatever the rewards
	if err := gc.Validate(); err != nil {
		return RLBenchResult{}, err
	}
	weights := slices.Clone(policy.LM.Params.Data)

	res := RLBenchResult{Name: nc.Name, User: "learned", Conversations: bc.Instances * bc.Group,
		Precision: lm.ActivePrecision().String(), SamplePrec: lm.ActiveSamplePrecision().String()}
	var iter, roll, logp, upd []float64
	// The frozen reference is kept from one iteration to the next, as a
	// run keeps it over its iterations: a fresh clone per iteration
	// allocated its activation buffers inside the timed log-prob phase,
	// which made that phase (one forward) cost as much as the update.
	var ref *chatlm.Model
	for rep := 0; rep <= bc.Steps; rep++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		copy(policy.LM.Params.Data, weights)
		r, err := newRLRun(policy, benchTask{}, user, nil, gc, algoGRPO, "", nil)
		if err != nil {
			return res, err
		}
		if ref == nil {
			ref = r.ref
		}
		r.ref = ref // the same initial weights
		start := time.Now()
		batch, err := r.interactiveBatch(ctx, 0)
		if err != nil {
			return res, err
		}
		rolloutS := time.Since(start).Seconds()
		adv := GroupAdvantages(batch.rewards, gc.Group, gc.AdvEps)
		us, err := r.update(batch.seqs, batch.seqAdvantages(adv), batch.sampled, 0)
		if err != nil {
			return res, err
		}
		iterS := time.Since(start).Seconds()
		if us.seqs != len(batch.seqs) || us.steps == 0 {
			return res, fmt.Errorf("rl bench: %d of %d sequences trained in %d steps", us.seqs, len(batch.seqs), us.steps)
		}
		if rep == 0 {
			res.Sequences = len(batch.seqs)
			for _, s := range batch.seqs {
				res.SequenceTokens += len(s.IDs)
			}
			res.SampledTokens = res.Conversations * (bc.Turns*bc.AgentTurn + (bc.Turns+1)*bc.UserTurn)
			continue // warm-up
		}
		iter, roll, logp, upd = append(iter, iterS), append(roll, rolloutS), append(logp, us.logprobS), append(upd, us.stepS)
	}
	res.IterationS, res.RolloutS, res.LogprobS, res.UpdateS = median(iter), median(roll), median(logp), median(upd)
	n := float64(res.SequenceTokens)
	res.IterTokensPerS, res.RollTokensPerS = n/res.IterationS, n/res.RolloutS
	res.LogpTokensPerS, res.UpdTokensPerS = n/res.LogprobS, n/res.UpdateS
	return res, nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// benchTokenizer is a byte-level BPE of up to vocab ids learned on
// lower-case prose, so that no merge involves a capital letter.
func benchTokenizer(vocab int) (*tokenizer.Tokenizer, error) {
	words := strings.Fields("the a an of to and in is it you that he was for on are with as his they be at one have this from or had by word but what some we can out other were all there when up use your how said each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find any new work part take get place made live where after back little only round man year came show every good me give our under name very through just form sentence great think say help low line differ turn cause much mean before move right boy old too same tell does set three want air well also play small end put home read hand port large spell add even land here must big high such follow act why ask men change went light kind off need house picture try us again animal point mother world near build self earth father")
	rng := rand.New(rand.NewPCG(7, 7))
	texts := make([]string, 400)
	for i := range texts {
		var b strings.Builder
		for j := 0; j < 12; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		fmt.Fprintf(&b, " %d.", rng.IntN(1000))
		texts[i] = b.String()
	}
	tc := tokenizer.DefaultTrainConfig()
	tc.VocabSize = vocab
	tok, err := tokenizer.Train(texts, tc)
	if err != nil {
		return nil, fmt.Errorf("rl bench: tokenizer: %w", err)
	}
	if tok.VocabSize() > vocab {
		return nil, errors.New("rl bench: tokenizer outgrew the vocabulary")
	}
	return tok, nil
}

// benchTask is the benchmark's task: every instance alike in shape, the
// reward a hash of the conversation (so groups are not flat). Each
// instance asks about its own numbers, as a real task's problems differ:
// the simulator's prompt is shared by an instance's G conversations and
// only its first words by the others, which is what the sampler's shared
// prefixes can save in a real run, not more.
type benchTask struct{}

func (benchTask) Name() string { return "bench" }
func (benchTask) Spec() string { return "bench" }

func (benchTask) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	a, b := 11+index*37%89, 23+index*53%71
	return &dialog.Oracle{Task: "bench", Split: split, ID: fmt.Sprintf("bench/%s/%d", split, index),
			Instruction: fmt.Sprintf("ask for the sum of %d and %d and check the answer", a, b),
			Opening:     fmt.Sprintf("what is the sum of %d and %d", a, b), Truth: fmt.Sprint(a + b),
			Persona: dialog.Persona{Patience: 3, Clarity: 0.5}},
		&dialog.View{Task: "bench", Instructions: "help the user with what they ask and give the answer when you know it"}, nil
}

func (benchTask) Score(_ *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	h := fnv.New64a()
	for _, m := range msgs {
		h.Write([]byte(m.Content))
	}
	return dialog.Score{Reward: float64(h.Sum64()%1000) / 1000}
}
