package scheduler

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/hangar-ml/hangar/internal/resources"
)

// nodeTable holds the scheduler's working copy of nodes, indexed by position in ID
// order, so that a lower index is a lower ID. The demand pass appends virtual nodes.
type nodeTable struct {
	ids      []string
	free     []resources.Vector
	capacity []resources.Vector
	labels   []map[string]string
	labelKey []string
	// busy marks a node that holds a run: an isolated run may not join it.
	busy []bool
}

// add appends a node and returns its index.
func (t *nodeTable) add(id string, capacity, free resources.Vector, labels map[string]string, key string) int {
	t.ids = append(t.ids, id)
	t.free = append(t.free, free)
	t.capacity = append(t.capacity, capacity)
	t.labels = append(t.labels, labels)
	t.labelKey = append(t.labelKey, key)
	t.busy = append(t.busy, false)
	return len(t.ids) - 1
}

// bucketKey groups nodes that are interchangeable for placement: same free vector, same labels,
// both holding runs or both empty (only an empty node takes an isolated run).
type bucketKey struct {
	free   resources.Vector
	labels string
	busy   bool
}

// bucket holds the nodes of one key, lowest index first.
type bucket struct {
	key    bucketKey
	labels map[string]string
	nodes  minHeap
}

// failKey is a request that found too few nodes. Free capacity only shrinks during a
// pass, so a request that failed once fails again and need not be tried.
type failKey struct {
	req      resources.Vector
	n        int
	sel      string
	isolated bool
}

// poolIndex finds gangs of nodes that fit a request in O(buckets) rather than O(nodes):
// nodes are bucketed by free capacity, buckets kept sorted by (GPU, CPU, memory, labels).
type poolIndex struct {
	nodes   *nodeTable
	buckets []*bucket
	byKey   map[bucketKey]*bucket
	failed  map[failKey]bool

	// Virtual nodes stand for nodes the pool could still add (demand pass only).
	virtualLeft   int
	virtualSize   resources.Vector
	virtualLabels map[string]string
	virtualKey    string
	opened        int
}

func newPoolIndex(nodes *nodeTable) *poolIndex {
	return &poolIndex{nodes: nodes, byKey: map[bucketKey]*bucket{}, failed: map[failKey]bool{}}
}

// keyCompare orders buckets by free GPUs, then cores, then memory, then labels, busy nodes
// before empty ones (packing onto busy nodes keeps empty ones for isolated runs).
func keyCompare(a, b bucketKey) int {
	return cmp.Or(cmp.Compare(a.free.GPU, b.free.GPU), cmp.Compare(a.free.MilliCPU, b.free.MilliCPU),
		cmp.Compare(a.free.Memory, b.free.Memory), strings.Compare(a.labels, b.labels), boolFirst(a.busy, b.busy))
}

// boolFirst orders true before false.
func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// insert files node i under its current free capacity.
func (ix *poolIndex) insert(i int) {
	k := bucketKey{free: ix.nodes.free[i], labels: ix.nodes.labelKey[i], busy: ix.nodes.busy[i]}
	b := ix.byKey[k]
	if b == nil {
		b = &bucket{key: k, labels: ix.nodes.labels[i]}
		ix.byKey[k] = b
		at, _ := slices.BinarySearchFunc(ix.buckets, k, func(x *bucket, k bucketKey) int { return keyCompare(x.key, k) })
		ix.buckets = slices.Insert(ix.buckets, at, b)
	}
	b.nodes.push(i)
}

// dropEmpty forgets buckets left with no nodes.
func (ix *poolIndex) dropEmpty() {
	ix.buckets = slices.DeleteFunc(ix.buckets, func(b *bucket) bool {
		if len(b.nodes) == 0 {
			delete(ix.byKey, b.key)
			return true
		}
		return false
	})
}

// from returns the first bucket that might fit req (buckets are sorted by GPU first).
func (ix *poolIndex) from(req resources.Vector) int {
	return sort.Search(len(ix.buckets), func(i int) bool { return ix.buckets[i].key.free.GPU >= req.GPU })
}

// fits reports whether every node of b can take req and carries sel's labels, and, for an
// isolated request, runs nothing yet.
func (b *bucket) fits(req resources.Vector, sel map[string]string, isolated bool) bool {
	return req.Fits(b.key.free) && matches(b.labels, sel) && !(isolated && b.key.busy)
}

// take finds n distinct nodes that each fit req and carry sel's labels, preferring the
// fullest nodes and then the lowest IDs, opening virtual nodes only when real ones run
// out; it takes req from each and returns their indices, or nothing when n cannot be had.
// An isolated request takes empty nodes only and closes them: they leave the index, so
// nothing else is placed on them in this pass.
func (ix *poolIndex) take(req resources.Vector, n int, sel map[string]string, selKey string, isolated bool) ([]int, bool) {
	fk := failKey{req: req, n: n, sel: selKey, isolated: isolated}
	if ix.failed[fk] {
		return nil, false
	}
	start, have := ix.from(req), 0
	for _, b := range ix.buckets[start:] {
		if have >= n {
			break
		}
		if b.fits(req, sel, isolated) {
			have += len(b.nodes)
		}
	}
	virtual := max(0, n-have)
	if virtual > 0 && (virtual > ix.virtualLeft || !req.Fits(ix.virtualSize) || !matches(ix.virtualLabels, sel)) {
		ix.failed[fk] = true
		return nil, false
	}
	got := make([]int, 0, n)
	for _, b := range ix.buckets[start:] {
		for len(got) < n-virtual && len(b.nodes) > 0 && b.fits(req, sel, isolated) {
			got = append(got, b.nodes.pop())
		}
	}
	for range virtual {
		got = append(got, ix.nodes.add("", ix.virtualSize, ix.virtualSize, ix.virtualLabels, ix.virtualKey))
	}
	ix.virtualLeft -= virtual
	ix.opened += virtual
	for _, i := range got {
		ix.nodes.free[i] = ix.nodes.free[i].Sub(req)
		ix.nodes.busy[i] = true
		if !isolated {
			ix.insert(i)
		}
	}
	ix.dropEmpty()
	return got, true
}

// takeFitting removes and returns every node that fits req and carries sel's labels now
// (and, for an isolated request, runs nothing).
func (ix *poolIndex) takeFitting(req resources.Vector, sel map[string]string, isolated bool) []int {
	var got []int
	for _, b := range ix.buckets[ix.from(req):] {
		if b.fits(req, sel, isolated) {
			for len(b.nodes) > 0 {
				got = append(got, b.nodes.pop())
			}
		}
	}
	ix.dropEmpty()
	return got
}

// takeBusy removes and returns up to k nodes whose capacity (not their free share) fits
// req and that carry sel's labels, the most free first: the nodes a blocked run will get
// soonest as their work ends.
func (ix *poolIndex) takeBusy(req resources.Vector, sel map[string]string, k int) []int {
	var got, keep []int
	for bi := len(ix.buckets) - 1; bi >= 0 && len(got) < k; bi-- {
		b := ix.buckets[bi]
		if !matches(b.labels, sel) {
			continue
		}
		keep = keep[:0]
		for len(b.nodes) > 0 && len(got) < k {
			i := b.nodes.pop()
			if req.Fits(ix.nodes.capacity[i]) {
				got = append(got, i)
			} else {
				keep = append(keep, i)
			}
		}
		for _, i := range keep {
			b.nodes.push(i)
		}
	}
	ix.dropEmpty()
	return got
}

// matches reports whether labels carry every key=value of sel.
func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// labelKey renders labels canonically, so that equal sets have equal keys.
func labelKey(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	for _, k := range keys {
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(labels[k])
		sb.WriteByte(0)
	}
	return sb.String()
}

// minHeap is a heap of node indices, smallest first.
type minHeap []int

func (h *minHeap) push(x int) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() int {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(s) && s[l] < s[small] {
			small = l
		}
		if r := l + 1; r < len(s) && s[r] < s[small] {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}
