package tokenizer

import (
	"container/heap"
	"strings"
	"sync"
)

// Encode returns the token ids of s. Text is encoded literally: a special
// token's spelling inside s is encoded as ordinary bytes, never as the
// special token. Decode(Encode(s)) == s for every s, valid UTF-8 or not.
func (t *Tokenizer) Encode(s string) []int {
	return t.AppendEncode(nil, s)
}

// AppendEncode appends the ids of s (as Encode) to dst.
func (t *Tokenizer) AppendEncode(dst []int, s string) []int {
	splitWords(s, t.digits, func(p string) {
		dst = t.appendPiece(dst, p)
	})
	return dst
}

// EncodeWithSpecials is Encode, except that every occurrence of a special
// token's spelling in s becomes that special token (the longest spelling
// wins where two start at the same byte). Use it only on trusted text, such
// as a template written by the program.
func (t *Tokenizer) EncodeWithSpecials(s string) []int {
	var dst []int
	for len(s) > 0 {
		at, id, n := len(s), int32(-1), 0
		for sp, sid := range t.specials {
			i := strings.Index(s[:min(len(s), at+len(sp))], sp)
			if i >= 0 && (i < at || i == at && len(sp) > n) {
				at, id, n = i, sid, len(sp)
			}
		}
		dst = t.AppendEncode(dst, s[:at])
		if id < 0 {
			break
		}
		dst = append(dst, int(id))
		s = s[at+n:]
	}
	return dst
}

// Decode returns the bytes the ids stand for, concatenated; a special token
// gives its spelling. Ids outside the vocabulary are skipped.
func (t *Tokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(t.tokens) {
			b.WriteString(t.tokens[id])
		}
	}
	return b.String()
}

// appendPiece appends the BPE encoding of one pre-tokenized piece,
// memoized: text repeats its words, so most pieces hit the cache.
func (t *Tokenizer) appendPiece(dst []int, p string) []int {
	if len(p) == 1 {
		return append(dst, int(t.byteID[p[0]]))
	}
	if ids, ok := t.cache.get(p); ok {
		for _, id := range ids {
			dst = append(dst, int(id))
		}
		return dst
	}
	ids := t.bpe(p)
	if len(p) <= maxCachedPiece {
		t.cache.put(p, ids)
	}
	for _, id := range ids {
		dst = append(dst, int(id))
	}
	return dst
}

// bpe applies the merges to the bytes of p: repeatedly, the adjacent pair
// with the lowest merge rank (leftmost among equals) is merged, until no
// pair has a rule. Long pieces use a heap so the cost stays O(n log n).
func (t *Tokenizer) bpe(p string) []int32 {
	syms := make([]int32, len(p))
	for i := 0; i < len(p); i++ {
		syms[i] = t.byteID[p[i]]
	}
	if len(syms) > 48 {
		return t.bpeHeap(syms)
	}
	return t.bpeScan(syms)
}

// bpeScan is the plain quadratic BPE loop: the reference bpeHeap is tested
// against, and the faster one for short pieces.
func (t *Tokenizer) bpeScan(syms []int32) []int32 {
	for len(syms) > 1 {
		best, at := int32(-1), -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := t.rank[pairKey(syms[i], syms[i+1])]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		syms[at] = t.merges[best].result
		syms = append(syms[:at+1], syms[at+2:]...)
	}
	return syms
}

// bpeHeap gives bpeScan's result on a doubly linked list of symbols with a
// heap of candidate merges keyed by (rank, position).
func (t *Tokenizer) bpeHeap(syms []int32) []int32 {
	n := len(syms)
	prev := make([]int32, n)
	next := make([]int32, n)
	alive := make([]bool, n)
	for i := range syms {
		prev[i], next[i], alive[i] = int32(i-1), int32(i+1), true
	}
	next[n-1] = -1
	h := &candHeap{}
	push := func(i int32) {
		if i < 0 || next[i] < 0 {
			return
		}
		j := next[i]
		if r, ok := t.rank[pairKey(syms[i], syms[j])]; ok {
			heap.Push(h, cand{r, i, syms[i], syms[j]})
		}
	}
	for i := int32(0); i < int32(n-1); i++ {
		push(i)
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(cand)
		j := next[c.pos]
		// Skip stale candidates: a neighbour merged since this was pushed.
		if !alive[c.pos] || j < 0 || syms[c.pos] != c.left || syms[j] != c.right {
			continue
		}
		syms[c.pos] = t.merges[c.rank].result
		alive[j] = false
		next[c.pos] = next[j]
		if k := next[j]; k >= 0 {
			prev[k] = c.pos
		}
		push(prev[c.pos])
		push(c.pos)
	}
	out := make([]int32, 0, n)
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}

type cand struct {
	rank, pos   int32
	left, right int32
}

type candHeap []cand

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Cache bounds: pieces longer than maxCachedPiece bytes are rare and not
// worth keeping; past maxCacheEntries the cache stops growing (it holds the
// corpus's common words by then).
const (
	maxCachedPiece  = 64
	maxCacheEntries = 1 << 16
)

// pieceCache memoizes piece → ids, shared by concurrent encoders.
type pieceCache struct {
	mu sync.RWMutex
	m  map[string][]int32
}

func newPieceCache() *pieceCache { return &pieceCache{m: make(map[string][]int32)} }

func (c *pieceCache) get(p string) ([]int32, bool) {
	c.mu.RLock()
	ids, ok := c.m[p]
	c.mu.RUnlock()
	return ids, ok
}

func (c *pieceCache) put(p string, ids []int32) {
	c.mu.Lock()
	if len(c.m) < maxCacheEntries {
		c.m[strings.Clone(p)] = ids
	}
	c.mu.Unlock()
}
