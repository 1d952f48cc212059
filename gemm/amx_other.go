//go:build !linux || !amd64 || purego

package gemm

const hasAMX = false

func amxRows(kp int, a []uint32, rs int, b []uint32, np int, out []float32, ldo int, onto bool) {
	panic("gemm: no AMX")
}
