//go:build !purego

package gemm

import (
	"syscall"

	"golang.org/x/sys/cpu"
)

//go:noescape
func amx32x32(kt int, a *uint32, lda int, b *uint32, np int, out *float32, ldo int, cfg *byte, load int)

// hasAMX: the CPU has AMX-BF16 and Linux lets this process use the tile
// data state (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, asked once at
// start-up; without it the first tile instruction faults).
var hasAMX = cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && requestAMX()

func requestAMX() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.Syscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}

// amxConfig is the 64-byte tile configuration: palette 1, all eight
// tiles 16 rows × 64 bytes.
var amxConfig = func() *[64]byte {
	var c [64]byte
	c[0] = 1
	for t := 0; t < 8; t++ {
		c[16+2*t] = 64
		c[48+t] = 16
	}
	return &c
}()

// amxRows computes out[0:32, 0:32·np] = A·B, or out + A·B when onto
// (the tiles' accumulators start from out's block), for the 32 rows of A
// at a (kp pairs a row, kp a multiple of 16, rows rs pairs apart) and np
// panels of b from panel 0.
func amxRows(kp int, a []uint32, rs int, b []uint32, np int, out []float32, ldo int, onto bool) {
	_ = a[31*rs+kp-1]
	_ = b[np*kp*bfNR-1]
	_ = out[31*ldo+np*bfNR-1]
	load := 0
	if onto {
		load = 1
	}
	amx32x32(kp/16, &a[0], 4*rs, &b[0], np, &out[0], 4*ldo, &amxConfig[0], load)
}
