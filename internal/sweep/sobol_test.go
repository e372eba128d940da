package sweep

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSobolPublishedPoints checks the unscrambled sequence against published values: the first
// points in three dimensions (Joe and Kuo's table, also scipy's and PyTorch's), and points 13
// and 1000 in all supported dimensions as PyTorch's SobolEngine(scramble=False), which uses the
// same new-joe-kuo-6.21201 numbers, draws them (coordinates times 2^32).
func TestSobolPublishedPoints(t *testing.T) {
	first := [][]float64{
		{0, 0, 0}, {0.5, 0.5, 0.5}, {0.75, 0.25, 0.25}, {0.25, 0.75, 0.75},
		{0.375, 0.375, 0.625}, {0.875, 0.875, 0.125}, {0.625, 0.125, 0.875}, {0.125, 0.625, 0.375},
	}
	for n, want := range first {
		if got := sobolPoint(uint64(n), 3, nil); !cmp.Equal(got, want) {
			t.Errorf("point %d = %v, want %v", n, got, want)
		}
	}
	deep := map[uint64][]uint32{
		13:   {3489660928, 2952790016, 3489660928, 268435456, 1879048192, 4026531840, 2415919104, 2415919104, 2415919104, 1879048192, 3489660928, 4026531840, 268435456, 3489660928, 805306368, 2415919104, 805306368, 2952790016, 2415919104, 4026531840, 2415919104, 268435456, 3489660928, 2415919104, 268435456, 1879048192, 1879048192, 268435456, 268435456, 1342177280, 2415919104, 1879048192, 1879048192, 2415919104, 2952790016, 1342177280, 268435456, 2952790016, 2952790016, 4026531840},
		1000: {943718400, 415236096, 2227175424, 2906652672, 1203765248, 3896508416, 197132288, 3862953984, 2151677952, 297795584, 364904448, 1094713344, 692060160, 1648361472, 616562688, 1589641216, 3091202048, 1480589312, 4257218560, 3116367872, 2243952640, 2361393152, 4081057792, 2319450112, 2503999488, 3896508416, 171966464, 4206886912, 255852544, 1463812096, 633339904, 624951296, 1270874112, 2545942528, 3443523584, 3309305856, 3644850176, 3569352704, 1321205760, 2059403264},
	}
	if sobolDims != 40 {
		t.Fatalf("sobolDims = %d, the table below has 40", sobolDims)
	}
	for n, ints := range deep {
		want := make([]float64, len(ints))
		for d, x := range ints {
			want[d] = float64(x) / (1 << 32)
		}
		if diff := cmp.Diff(want, sobolPoint(n, sobolDims, nil)); diff != "" {
			t.Errorf("point %d (-want +got):\n%s", n, diff)
		}
	}
}

// TestSobolShift: a digital shift XORs each coordinate with the seed's mask, so the shifted
// point set is still one point per dyadic interval of the first 2^k points, and different seeds
// shift differently.
func TestSobolShift(t *testing.T) {
	shift := sobolShift(7, 2)
	if cmp.Equal(shift, sobolShift(8, 2)) {
		t.Fatalf("seeds 7 and 8 give the same shift %v", shift)
	}
	if !cmp.Equal(shift, sobolShift(7, 2)) {
		t.Fatal("the shift of seed 7 changed between calls")
	}
	for d := range 2 {
		seen := map[int]bool{}
		for n := range uint64(8) {
			seen[int(sobolPoint(n, 2, shift)[d]*8)] = true
		}
		if len(seen) != 8 {
			t.Errorf("dimension %d: the first 8 shifted points fill %d of 8 eighths", d, len(seen))
		}
	}
}
