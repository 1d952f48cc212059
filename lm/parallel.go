package lm

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/calibrl/calibrl/gemm"
)

// workerSetting is SetWorkers' count; 0 means runtime.GOMAXPROCS(0).
var workerSetting atomic.Int32

// SetWorkers sets how many goroutines one call of a model whose Workers
// is ≤ 0 spreads its work over, and bounds every gemm.Sgemm call the same
// way (gemm.SetWorkers); n ≤ 0 restores runtime.GOMAXPROCS(0). It returns
// the previous setting. Results do not depend on it, so it may change
// while models run elsewhere (a call already under way keeps the count
// it sized its scratch for): a caller running several models side by
// side, as reproduce runs independent stages, divides the cores between
// them with it.
func SetWorkers(n int) int {
	n = max(n, 0)
	gemm.SetWorkers(n)
	return int(workerSetting.Swap(int32(n)))
}

// defaultWorkers is the count of models whose Workers is ≤ 0.
func defaultWorkers() int {
	if n := int(workerSetting.Load()); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// parallelFor runs fn over [0,n) split into at most workers contiguous
// ranges, one goroutine each, and waits. Callers give it only work whose
// items are independent (rows, heads, fixed chunks), so the split never
// changes a result.
func parallelFor(workers, n int, fn func(lo, hi int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// minParallel is the least work (in floats touched) worth handing to more
// than one goroutine: below it, starting goroutines costs more than the
// loop. Decoding one token per sequence lives below this line.
const minParallel = 1 << 14

// workersFor returns workers, or 1 when work is below minParallel.
func workersFor(workers, work int) int {
	if work < minParallel {
		return 1
	}
	return workers
}

// reduceChunks is the fixed number of row chunks a column reduction (bias
// and LayerNorm gradients) is cut into. It does not depend on the worker
// count, so partial sums and their order are the same on any machine.
const reduceChunks = 16

// columnSum adds Σ_rows x[row,:] into dst (len(dst) = cols). Rows are
// summed in fixed chunks, each chunk's partials then added in chunk order.
func columnSum(workers int, dst, x []float32, rows, cols int, scratch []float32) {
	chunks := reduceChunks
	if rows < chunks {
		chunks = 1
	}
	part := scratch[:chunks*cols]
	parallelFor(workersFor(workers, rows*cols), chunks, func(lo, hi int) {
		for ch := lo; ch < hi; ch++ {
			p := part[ch*cols : (ch+1)*cols]
			clear(p)
			r0, r1 := ch*rows/chunks, (ch+1)*rows/chunks
			for r := r0; r < r1; r++ {
				addTo(p, x[r*cols:(r+1)*cols])
			}
		}
	})
	for ch := 0; ch < chunks; ch++ {
		p := part[ch*cols : (ch+1)*cols]
		for i, v := range p {
			dst[i] += v
		}
	}
}

// parallelForW is parallelFor that also tells fn which worker (0..workers-1)
// runs the range, for per-worker scratch buffers.
func parallelForW(workers, n int, fn func(w, lo, hi int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	wg.Wait()
}
