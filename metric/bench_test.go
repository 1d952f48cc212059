package metric

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// benchDocs returns a 100-word reference document and a hypothesis with
// about one word in ten edited, from a fixed seed.
func benchDocs() (hyp, ref string) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the team will meet on monday to review the budget and the plan for " +
		"march , after which alice sends a short memo . prices rose 3.5 % in june ; bob's report " +
		"lists 42 items , each with a date and an owner .")
	ref100 := make([]string, 100)
	for i := range ref100 {
		ref100[i] = words[rng.IntN(len(words))]
	}
	hyp100 := append([]string(nil), ref100...)
	for i := range hyp100 {
		if rng.IntN(10) == 0 {
			hyp100[i] = words[rng.IntN(len(words))]
		}
	}
	return strings.Join(hyp100, " "), strings.Join(ref100, " ")
}

func BenchmarkTokenize13a100Words(b *testing.B) {
	_, ref := benchDocs()
	b.ReportAllocs()
	for b.Loop() {
		Tokenize13a(ref)
	}
}

func BenchmarkSentenceBLEU100Words(b *testing.B) {
	hyp, ref := benchDocs()
	bl, _ := NewBLEU(DefaultSentenceBLEUConfig())
	b.ReportAllocs()
	for b.Loop() {
		bl.Sentence(hyp, ref)
	}
}

func BenchmarkSentenceChrF100Words(b *testing.B) {
	hyp, ref := benchDocs()
	c, _ := NewChrF(DefaultChrFConfig())
	b.ReportAllocs()
	for b.Loop() {
		c.Sentence(hyp, ref)
	}
}

func BenchmarkSentenceChrFPlusPlus100Words(b *testing.B) {
	hyp, ref := benchDocs()
	c, _ := NewChrF(DefaultChrFPlusPlusConfig())
	b.ReportAllocs()
	for b.Loop() {
		c.Sentence(hyp, ref)
	}
}
