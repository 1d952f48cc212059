//go:build !amd64 || purego

package lm

var useAVX2 = false // no vector kernels off amd64

func expShiftAVX2(x []float32, shift float32) float32 {
	panic("lm: no AVX2 kernels on this architecture")
}

func geluAVX2(out, th, x []float32) { panic("lm: no AVX2 kernels on this architecture") }

func scoresAVX2(s, q, k []float32, stride int, scale float32) { panic("lm: no AVX2 kernels") }

func mixAVX2(o, p, v []float32, stride int) { panic("lm: no AVX2 kernels") }

func softmaxBackAVX2(d, p []float32, s, scale float32) { panic("lm: no AVX2 kernels") }

func geluBackAVX2(dx, dout, x, th []float32) { panic("lm: no AVX2 kernels") }

func maxAVX2(x []float32) float32 { panic("lm: no AVX2 kernels") }

func scaleAVX2(x []float32, s float32) { panic("lm: no AVX2 kernels") }

func lnStatsAVX2(x []float32) (mean, rstd float32) { panic("lm: no AVX2 kernels") }

func lnApplyAVX2(out, x, w, b []float32, mean, rstd float32) { panic("lm: no AVX2 kernels") }

func lnBack1AVX2(cw, cb, x, dout, w []float32, mean, rstd float32) (sd, sdx float32) {
	panic("lm: no AVX2 kernels")
}

func lnBack2AVX2(dx, x, dout, w []float32, mean, rstd, sd, sdx float32) {
	panic("lm: no AVX2 kernels")
}

var useAVX512 = false

func scoresBF16AVX512(s, q []float32, k []uint16, stride int, scale float32) {
	panic("lm: no AVX-512 kernels")
}

func mixBF16AVX512(o, p []float32, v []uint16, stride int) { panic("lm: no AVX-512 kernels") }
