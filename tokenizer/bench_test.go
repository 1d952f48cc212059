package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// BenchmarkEncode reports encoding throughput (MB/s) on held-out text:
// "warm" with the piece cache filled by earlier iterations (steady state),
// "cold" with an empty cache each iteration.
func BenchmarkEncode(b *testing.B) {
	tok := mustDialog(b)
	corpora := map[string]string{"dialog": strings.Join(dialogCorpus(2, 400), "\n")}
	if p := proseCorpus(); p != nil {
		corpora["prose"] = strings.Join(p, "\n\n")
	}
	// Adversarial: one 1 MB piece (the heap BPE path, never cached) and
	// 1 MB of random bytes (mostly invalid UTF-8).
	corpora["one-piece"] = strings.Repeat("ab", 1<<19)
	rng := rand.New(rand.NewPCG(1, 1))
	random := make([]byte, 1<<20)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	corpora["random-bytes"] = string(random)
	for _, name := range []string{"dialog", "prose", "one-piece", "random-bytes"} {
		text, ok := corpora[name]
		if !ok {
			continue
		}
		for _, cold := range []bool{false, true} {
			label := name + "/warm"
			if cold {
				label = name + "/cold"
			}
			b.Run(label, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				ids := make([]int, 0, len(text))
				for b.Loop() {
					if cold {
						tok.cache = newPieceCache()
					}
					ids = tok.AppendEncode(ids[:0], text)
				}
				b.ReportMetric(float64(len(text))/float64(len(ids)), "bytes/token")
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := mustDialog(b)
	text := strings.Join(dialogCorpus(2, 400), "\n")
	ids := tok.Encode(text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Decode(ids)
	}
}

func BenchmarkTrain(b *testing.B) {
	texts := dialogCorpus(1, 1000)
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 1024
	for b.Loop() {
		if _, err := Train(texts, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBytesPerToken trains at vocab 512/1024/2048 and reports bytes
// per token on held-out text (train and held-out sets are disjoint: other
// seeds for the dialogues, every fifth paragraph for prose) and the training
// time. The synthetic dialogues have a small vocabulary, so training stops
// early there (MinFrequency) and the reached vocab size is reported.
func BenchmarkBytesPerToken(b *testing.B) {
	type split struct{ train, held []string }
	corpora := map[string]split{"dialog": {dialogCorpus(1, 4000), dialogCorpus(2, 400)}}
	if p := proseCorpus(); p != nil {
		var s split
		for i, para := range p {
			if i%5 == 4 {
				s.held = append(s.held, para)
			} else {
				s.train = append(s.train, para)
			}
		}
		corpora["prose"] = s
	}
	for _, name := range []string{"dialog", "prose"} {
		c, ok := corpora[name]
		if !ok {
			continue
		}
		for _, v := range []int{512, 1024, 2048} {
			for _, digits := range []bool{true, false} {
				b.Run(fmt.Sprintf("%s/vocab=%d/digits=%v", name, v, digits), func(b *testing.B) {
					cfg := DefaultTrainConfig()
					cfg.VocabSize, cfg.SplitDigits = v, digits
					var tok *Tokenizer
					var train time.Duration
					for b.Loop() {
						start := time.Now()
						var err error
						if tok, err = Train(c.train, cfg); err != nil {
							b.Fatal(err)
						}
						train = time.Since(start)
					}
					nb, nt := 0, 0
					for _, s := range c.held {
						nb += len(s)
						nt += len(tok.Encode(s))
					}
					b.ReportMetric(float64(nb)/float64(nt), "bytes/token")
					b.ReportMetric(float64(tok.VocabSize()), "vocab")
					b.ReportMetric(float64(train.Milliseconds()), "train_ms")
				})
			}
		}
	}
}
