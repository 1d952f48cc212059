//go:build !unix

package reproduce

import (
	"runtime/metrics"
	"time"
)

// processCPU is the Go runtime's estimate of the CPU time spent so far
// (its user, garbage collection and scavenging classes): where getrusage
// is missing, the nearest measure of busy CPU.
func processCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/user:cpu-seconds"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/scavenge/total:cpu-seconds"}}
	metrics.Read(s)
	var t float64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindFloat64 {
			t += x.Value.Float64()
		}
	}
	return time.Duration(t * float64(time.Second))
}
