package kubernetes

import (
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A canceled run's tombstone is let go a while after its pods were seen gone, never counting
// from its deletion: pods may stop for their whole grace period (CI met a Job released while
// Status was about to report the cancel, its pods gone for an instant but deleted minutes ago).
func TestLeftoversCountFromThePodsGone(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	deleted := metav1.NewTime(start.Add(-10 * time.Minute))
	tomb := func(uid string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), DeletionTimestamp: &deleted,
			Finalizers: []string{"foregroundDeletion", FinalizerResult}}}
	}
	released := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "released", DeletionTimestamp: &deleted}}
	live := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{UID: "live", Finalizers: []string{FinalizerResult}}}
	jobs := []*batchv1.Job{tomb("a"), tomb("b"), released, live}
	pods := map[types.UID]bool{"a": false, "b": true} // b's pods still stop
	noPods := func(uid types.UID) bool { return !pods[uid] }
	after := time.Minute

	steps := []struct {
		at   time.Duration
		back bool // b's pods gone from here on
		want []string
	}{
		{at: 0, want: nil},                                 // a's pods seen gone now: its minute starts
		{at: 30 * time.Second, want: nil},                  // not yet
		{at: time.Minute, back: true, want: []string{"a"}}, // a's minute is up; b's pods just went
		{at: 90 * time.Second, want: []string{"a"}},        // a is still there (the release failed): again
		{at: 2 * time.Minute, want: []string{"a", "b"}},
	}
	var gone map[types.UID]time.Time
	for _, s := range steps {
		if s.back {
			pods["b"] = false
		}
		var due []*batchv1.Job
		due, gone = leftovers(jobs, noPods, gone, start.Add(s.at), after)
		var got []string
		for _, j := range due {
			got = append(got, string(j.UID))
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("at +%s: released %v, want %v", s.at, got, s.want)
		}
	}
	// A Job whose pods come back (a replacement pod) starts its wait again.
	pods["a"] = true
	_, gone = leftovers(jobs, noPods, gone, start.Add(3*time.Minute), after)
	if _, ok := gone["a"]; ok {
		t.Error("a's pods came back but its wait was kept")
	}
}

// The watch's caches keep no managedFields: Hangar never reads them and they are much of an
// object's size.
func TestStripManagedFields(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}}}
	got, err := stripManagedFields(p)
	if err != nil {
		t.Fatal(err)
	}
	gp := got.(*corev1.Pod)
	if gp.ManagedFields != nil || gp.Name != "p" || gp.Labels["a"] != "b" {
		t.Errorf("after the transform: %+v", gp.ObjectMeta)
	}
	if v, err := stripManagedFields("not an object"); err != nil || v != "not an object" {
		t.Errorf("a value without metadata is kept as is: %v, %v", v, err)
	}
}
