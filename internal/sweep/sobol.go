package sweep

// The sobol rule draws trial i from point i+1 of a Sobol sequence (point 0 is the origin, which
// the normal kinds would map to minus infinity), built from the Joe–Kuo direction numbers
// (new-joe-kuo-6.21201, S. Joe and F. Y. Kuo, 2008) and scrambled by a random digital shift: each
// dimension's 32-bit coordinates are XORed with a mask drawn from the seed. A digital shift keeps
// the sequence's net structure (its evenness) while different seeds give different point sets;
// sobolPoint with a zero shift is the published, unscrambled sequence.

// joeKuo are the rows for dimensions 2..: s (degree), a (coefficients), m (initial numbers).
// Dimension 1 is the van der Corput sequence and needs none.
var joeKuo = []struct {
	s, a uint32
	m    []uint32
}{
	{1, 0, []uint32{1}}, {2, 1, []uint32{1, 3}}, {3, 1, []uint32{1, 3, 1}}, {3, 2, []uint32{1, 1, 1}},
	{4, 1, []uint32{1, 1, 3, 3}}, {4, 4, []uint32{1, 3, 5, 13}}, {5, 2, []uint32{1, 1, 5, 5, 17}},
	{5, 4, []uint32{1, 1, 5, 5, 5}}, {5, 7, []uint32{1, 1, 7, 11, 19}}, {5, 11, []uint32{1, 1, 5, 1, 1}},
	{5, 13, []uint32{1, 1, 1, 3, 11}}, {5, 14, []uint32{1, 3, 5, 5, 31}}, {6, 1, []uint32{1, 3, 3, 9, 7, 49}},
	{6, 13, []uint32{1, 1, 1, 15, 21, 21}}, {6, 16, []uint32{1, 3, 1, 13, 27, 49}},
	{6, 19, []uint32{1, 1, 1, 15, 7, 5}}, {6, 22, []uint32{1, 3, 1, 15, 13, 25}},
	{6, 25, []uint32{1, 1, 5, 5, 19, 61}}, {7, 1, []uint32{1, 3, 7, 11, 23, 15, 103}},
	{7, 4, []uint32{1, 3, 7, 13, 13, 15, 69}}, {7, 7, []uint32{1, 1, 3, 13, 7, 35, 63}},
	{7, 8, []uint32{1, 3, 5, 9, 1, 25, 53}}, {7, 14, []uint32{1, 3, 1, 13, 9, 35, 107}},
	{7, 19, []uint32{1, 3, 1, 5, 27, 61, 31}}, {7, 21, []uint32{1, 1, 5, 11, 19, 41, 61}},
	{7, 28, []uint32{1, 3, 5, 3, 3, 13, 69}}, {7, 31, []uint32{1, 1, 7, 13, 1, 19, 1}},
	{7, 32, []uint32{1, 3, 7, 5, 13, 19, 59}}, {7, 37, []uint32{1, 1, 3, 9, 25, 29, 41}},
	{7, 41, []uint32{1, 3, 5, 13, 23, 1, 55}}, {7, 42, []uint32{1, 3, 7, 3, 13, 59, 17}},
	{7, 50, []uint32{1, 3, 1, 3, 5, 53, 69}}, {7, 55, []uint32{1, 1, 5, 5, 23, 33, 13}},
	{7, 56, []uint32{1, 1, 7, 7, 1, 61, 123}}, {7, 59, []uint32{1, 1, 7, 9, 13, 61, 49}},
	{7, 62, []uint32{1, 3, 3, 5, 3, 55, 33}}, {8, 14, []uint32{1, 3, 1, 15, 31, 13, 49, 245}},
	{8, 21, []uint32{1, 3, 5, 15, 31, 59, 63, 97}}, {8, 22, []uint32{1, 3, 1, 11, 11, 11, 77, 249}},
}

// sobolDims is how many parameters the sobol rule supports.
var sobolDims = len(joeKuo) + 1

const sobolBits = 32

// directions are dimension d's 32 direction numbers v_k = m_k·2^(32-k), from the recurrence
// of its primitive polynomial.
func directions(d int) [sobolBits]uint32 {
	var v [sobolBits]uint32
	if d == 0 {
		for k := range v {
			v[k] = 1 << (sobolBits - 1 - k)
		}
		return v
	}
	row := joeKuo[d-1]
	s := int(row.s)
	for k := 0; k < s; k++ {
		v[k] = row.m[k] << (sobolBits - 1 - k)
	}
	for k := s; k < sobolBits; k++ {
		v[k] = v[k-s] ^ (v[k-s] >> s)
		for j := 1; j < s; j++ {
			if (row.a>>(s-1-j))&1 == 1 {
				v[k] ^= v[k-j]
			}
		}
	}
	return v
}

// sobolPoint is point n of the sequence in dims dimensions, each coordinate XORed with shift[d]
// (nil: no shift). Computed directly from n's Gray code, so no state is kept between trials.
func sobolPoint(n uint64, dims int, shift []uint32) []float64 {
	g := n ^ (n >> 1)
	out := make([]float64, dims)
	for d := range dims {
		v := directions(d)
		var x uint32
		for k := 0; g>>k != 0 && k < sobolBits; k++ {
			if (g>>k)&1 == 1 {
				x ^= v[k]
			}
		}
		if shift != nil {
			x ^= shift[d]
		}
		out[d] = float64(x) / (1 << sobolBits)
	}
	return out
}

// sobolShift is the seed's digital shift, one mask per dimension.
func sobolShift(seed int64, dims int) []uint32 {
	r := trialRand(seed, ^uint64(0)) // a stream no trial index uses
	shift := make([]uint32, dims)
	for d := range shift {
		shift[d] = r.Uint32()
	}
	return shift
}
