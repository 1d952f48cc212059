package tokenizer

import (
	"container/heap"
	"errors"
	"fmt"
	"iter"
	"slices"
	"unicode/utf8"
)

// TrainConfig sets what Train learns.
type TrainConfig struct {
	// VocabSize is the number of ids to reach, counting the 256 byte tokens
	// and the special tokens. Training stops earlier when no pair occurs
	// MinFrequency times. Default 1024.
	VocabSize int
	// Specials are the special tokens, given ids 0, 1, … in this order.
	// Default DefaultSpecials(). Each must be non-empty and unique.
	Specials []string
	// MinFrequency is the fewest occurrences a pair needs to become a merge.
	// Default 2 (a pair seen once teaches nothing).
	MinFrequency int
	// SplitDigits isolates every numeric rune before BPE, so numbers are
	// spelt digit by digit (as LLaMA and PaLM do), which helps small models
	// do arithmetic. Default true.
	SplitDigits bool
}

// DefaultTrainConfig returns the documented defaults.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{VocabSize: 1024, Specials: DefaultSpecials(), MinFrequency: 2, SplitDigits: true}
}

// MaxVocabSize bounds TrainConfig.VocabSize.
const MaxVocabSize = 1 << 20

// Validate reports the first field that is out of range.
func (c TrainConfig) Validate() error {
	seen := make(map[string]bool, len(c.Specials))
	for i, s := range c.Specials {
		if s == "" {
			return fmt.Errorf("tokenizer: TrainConfig.Specials[%d] is empty", i)
		}
		if !utf8.ValidString(s) {
			return fmt.Errorf("tokenizer: TrainConfig.Specials[%d] %q is not valid UTF-8", i, s)
		}
		if seen[s] {
			return fmt.Errorf("tokenizer: TrainConfig.Specials[%d] %q repeats", i, s)
		}
		seen[s] = true
	}
	if min := 256 + len(c.Specials); c.VocabSize < min || c.VocabSize > MaxVocabSize {
		return fmt.Errorf("tokenizer: TrainConfig.VocabSize %d out of range [%d, %d] (256 bytes + %d specials)",
			c.VocabSize, min, MaxVocabSize, len(c.Specials))
	}
	if c.MinFrequency < 1 {
		return fmt.Errorf("tokenizer: TrainConfig.MinFrequency %d, want ≥ 1", c.MinFrequency)
	}
	return nil
}

// Train learns a byte-level BPE tokenizer from texts. The result depends
// only on the texts' contents and cfg (not on map order or timing): the same
// input gives the same merges.
func Train(texts []string, cfg TrainConfig) (*Tokenizer, error) {
	return TrainSeq(slices.Values(texts), cfg)
}

// TrainSeq is Train for texts produced one at a time, so a corpus need not
// be held in memory; only the distinct pre-tokenized pieces are kept.
func TrainSeq(texts iter.Seq[string], cfg TrainConfig) (*Tokenizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	counts := make(map[string]int64)
	for text := range texts {
		splitWords(text, cfg.SplitDigits, func(p string) { counts[p]++ })
	}

	t := &Tokenizer{digits: cfg.SplitDigits}
	for _, s := range cfg.Specials {
		t.tokens = append(t.tokens, s)
		t.special = append(t.special, true)
	}
	index := make(map[string]int32) // raw bytes → id of the non-special tokens
	for b := 0; b < 256; b++ {
		index[string([]byte{byte(b)})] = int32(len(t.tokens))
		t.tokens = append(t.tokens, string([]byte{byte(b)}))
		t.special = append(t.special, false)
	}
	// A learned token must not be spelt like a special token in the
	// tokenizer.json vocab, where both live in one namespace.
	forbidden := make(map[string]bool)
	for _, s := range cfg.Specials {
		if raw, ok := byteLevelBytes(s); ok {
			forbidden[string(raw)] = true
		}
	}

	tr := newTrainer(counts, &index)
	for len(t.tokens) < cfg.VocabSize {
		p, n, ok := tr.best()
		if !ok || n < int64(cfg.MinFrequency) {
			break
		}
		a, b := int32(p>>32), int32(uint32(p))
		s := t.tokens[a] + t.tokens[b]
		if forbidden[s] {
			tr.drop(p)
			continue
		}
		id, ok := index[s]
		if !ok { // else another merge path already spelt s: reuse its id
			id = int32(len(t.tokens))
			index[s] = id
			t.tokens = append(t.tokens, s)
			t.special = append(t.special, false)
		}
		t.merges = append(t.merges, merge{a, b, id})
		tr.apply(p, id)
	}
	t.build()
	return t, nil
}

// trainer holds the corpus as distinct words (pre-tokenized pieces) with
// their counts, the count of every adjacent pair, and where each pair occurs,
// so that a merge only revisits the words that contain it.
type trainer struct {
	words  [][]int32
	freq   []int64
	pairs  map[uint64]int64
	where  map[uint64][]int32 // pair → words that held it (may be stale)
	h      pairHeap
	stamp  []int32 // per word: last merge that visited it
	merges int32
}

func newTrainer(counts map[string]int64, index *map[string]int32) *trainer {
	// Sort the pieces so that word order, and with it every tie below, does
	// not depend on map iteration order.
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	tr := &trainer{pairs: make(map[uint64]int64), where: make(map[uint64][]int32)}
	for w, k := range keys {
		syms := make([]int32, len(k))
		for i := 0; i < len(k); i++ {
			syms[i] = (*index)[k[i:i+1]]
		}
		tr.words = append(tr.words, syms)
		tr.freq = append(tr.freq, counts[k])
		for i := 0; i+1 < len(syms); i++ {
			p := pairKey(syms[i], syms[i+1])
			tr.pairs[p] += counts[k]
			if ws := tr.where[p]; len(ws) == 0 || ws[len(ws)-1] != int32(w) {
				tr.where[p] = append(ws, int32(w))
			}
		}
	}
	tr.stamp = make([]int32, len(tr.words))
	for p, n := range tr.pairs {
		tr.h = append(tr.h, pairCount{p, n})
	}
	heap.Init(&tr.h)
	return tr
}

// best returns the most frequent pair (ties: smaller left id, then smaller
// right id). Heap entries are lazy: one whose count is out of date is pushed
// back with its current count.
func (tr *trainer) best() (uint64, int64, bool) {
	for tr.h.Len() > 0 {
		top := heap.Pop(&tr.h).(pairCount)
		cur := tr.pairs[top.pair]
		if cur == top.n {
			return top.pair, cur, true
		}
		if cur > 0 {
			heap.Push(&tr.h, pairCount{top.pair, cur})
		}
	}
	return 0, 0, false
}

// drop removes pair p from consideration for good.
func (tr *trainer) drop(p uint64) { tr.pairs[p] = 0 }

// apply replaces every occurrence of pair p, left to right, by id in the
// words that hold it, and updates the pair counts.
func (tr *trainer) apply(p uint64, id int32) {
	a, b := int32(p>>32), int32(uint32(p))
	tr.merges++
	delta := make(map[uint64]int64)
	ws := tr.where[p]
	delete(tr.where, p)
	for _, w := range ws {
		if tr.stamp[w] == tr.merges {
			continue
		}
		tr.stamp[w] = tr.merges
		syms, f := tr.words[w], tr.freq[w]
		if !hasPair(syms, a, b) {
			continue
		}
		for i := 0; i+1 < len(syms); i++ {
			delta[pairKey(syms[i], syms[i+1])] -= f
		}
		out := syms[:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
				out = append(out, id)
				i++
			} else {
				out = append(out, syms[i])
			}
		}
		tr.words[w] = out
		for i := 0; i+1 < len(out); i++ {
			q := pairKey(out[i], out[i+1])
			delta[q] += f
			if out[i] == id || out[i+1] == id {
				if l := tr.where[q]; len(l) == 0 || l[len(l)-1] != w {
					tr.where[q] = append(l, w)
				}
			}
		}
	}
	// Apply in key order so the heap, and so every tie, is deterministic.
	keys := make([]uint64, 0, len(delta))
	for q, d := range delta {
		if d != 0 {
			keys = append(keys, q)
		}
	}
	slices.Sort(keys)
	for _, q := range keys {
		n := tr.pairs[q] + delta[q]
		if n < 0 {
			panic(errors.New("tokenizer: negative pair count")) // broken invariant
		}
		if n == 0 {
			delete(tr.pairs, q)
			continue
		}
		tr.pairs[q] = n
		if delta[q] > 0 {
			heap.Push(&tr.h, pairCount{q, n})
		}
	}
	delete(tr.pairs, p)
}

func hasPair(syms []int32, a, b int32) bool {
	for i := 0; i+1 < len(syms); i++ {
		if syms[i] == a && syms[i+1] == b {
			return true
		}
	}
	return false
}

type pairCount struct {
	pair uint64
	n    int64
}

// pairHeap is a max-heap by count; ties go to the smaller pair key (left
// id, then right id).
type pairHeap []pairCount

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	if h[i].n != h[j].n {
		return h[i].n > h[j].n
	}
	return h[i].pair < h[j].pair
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pairCount)) }
func (h *pairHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
