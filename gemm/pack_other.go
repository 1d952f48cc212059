//go:build !amd64 || purego

package gemm

func gather8(dst []float32, stride int, src []float32, off, ld, kc int) {
	gather8Go(dst, stride, src, off, ld, kc)
}
