//go:build !amd64 || purego

package gemm

const useVecAsm = true

func dotAsm(x, y []float32) float32 { return dotGo(x, y) }

func axpyAsm(alpha float32, x, y []float32) { axpyGo(alpha, x, y) }
