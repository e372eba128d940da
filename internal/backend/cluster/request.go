package cluster

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/hangar-ml/hangar/internal/job"
	"github.com/hangar-ml/hangar/internal/resources"
	"github.com/hangar-ml/hangar/internal/sizes"
)

// request is what a run takes on each node of a cluster of the given size.
//
// A job without resources.properties takes the whole node, as on Azure ML clusters: one run per
// node. A job that names some of cores, memory and gpus (Hangar's extension) takes what it
// names, and of each of cores and memory it does not name, the same share of the node as the
// largest share it names: cores 0.25 on a 4-core, 16Gi node takes 0.25 cores and 1Gi, so
// sixteen such runs share the node, where taking the node's memory would let one run at a time.
// GPUs it does not name it does not get. Shares round down, so runs that fit by what they name
// always fit together. A value that does not parse counts as not named (create refuses it).
func request(sp job.Spec, size sizes.Size) resources.Vector {
	whole := size.Vector()
	props := sp.Resources.Properties
	if len(props) == 0 {
		return whole
	}
	var v resources.Vector
	var named [3]bool // cores, memory, gpus
	if x, ok := props["cores"]; ok {
		if m, err := resources.ParseCPU(fmt.Sprint(x)); err == nil {
			v.MilliCPU, named[0] = m, true
		}
	}
	if x, ok := props["memory"]; ok {
		if b, err := resources.ParseMemory(fmt.Sprint(x)); err == nil {
			v.Memory, named[1] = b, true
		}
	}
	if x, ok := props["gpus"]; ok {
		if g, err := strconv.Atoi(fmt.Sprint(x)); err == nil {
			v.GPU, named[2] = int64(g), true
		}
	}
	// The largest named share, as the fraction num/den of the node.
	num, den := int64(0), int64(1)
	for i, pair := range [3][2]int64{{v.MilliCPU, whole.MilliCPU}, {v.Memory, whole.Memory}, {v.GPU, whole.GPU}} {
		have, of := min(pair[0], pair[1]), pair[1]
		if named[i] && of > 0 && greater(have, of, num, den) {
			num, den = have, of
		}
	}
	if !named[0] {
		v.MilliCPU = mulDiv(whole.MilliCPU, num, den)
	}
	if !named[1] {
		v.Memory = mulDiv(whole.Memory, num, den)
	}
	return v
}

// greater reports whether a/b > c/d (b, d > 0), exactly.
func greater(a, b, c, d int64) bool {
	hi1, lo1 := bits.Mul64(uint64(a), uint64(d))
	hi2, lo2 := bits.Mul64(uint64(c), uint64(b))
	return hi1 > hi2 || (hi1 == hi2 && lo1 > lo2)
}

// mulDiv is x·num/den rounded down, without overflow (0 ≤ num ≤ den, den > 0).
func mulDiv(x, num, den int64) int64 {
	if x <= 0 || num <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(x), uint64(num))
	q, _ := bits.Div64(hi, lo, uint64(den))
	return int64(q)
}
