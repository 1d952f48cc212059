//go:build !linux || !amd64 || purego

package gemm

const hasAMX = false

func amxRows(kp int, a []uint32, b []uint32, np int, out []float32, ldo int) {
	panic("gemm: no AMX")
}
