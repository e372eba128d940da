package kubernetes

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Labels and annotations on everything Hangar creates in a cluster.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "hangar"
	LabelRun       = "hangar.dev/run"
	// LabelWorkspace names the workspace whose run it is: run ids repeat across workspaces.
	LabelWorkspace    = "hangar.dev/workspace"
	AnnotationRunID   = "hangar.dev/run-id"
	AnnotationAttempt = "hangar.dev/attempt"
	// AnnotationCanceled marks a Job Hangar deleted to cancel its run; FinalizerResult keeps the
	// Job (with that mark) until Hangar has read how the run ended.
	AnnotationCanceled = "hangar.dev/canceled-at"
	FinalizerResult    = "hangar.dev/result"
	// LabelKueueQueue is the label Kueue admits Jobs by.
	LabelKueueQueue = "kueue.x-k8s.io/queue-name"
	// LabelJobName is set by Kubernetes on a Job's pods (and selects them for the headless Service).
	LabelJobName = "batch.kubernetes.io/job-name"
	// LabelCompletionIndex is set by Kubernetes on an Indexed Job's pods.
	LabelCompletionIndex = "batch.kubernetes.io/job-completion-index"
)

// maxJobName keeps "<job>-<index>", an Indexed Job pod's host name, a DNS label (63).
const maxJobName = 52

// JobName is the name of the Job (and of its Secret and Service) of a run's attempt: the run id
// made a DNS label, with a hash of the id when that changed or shortened it (so two ids never
// share a name), and the attempt after the first.
func JobName(runID string, attempt int) string {
	suffix := ""
	if attempt > 1 {
		suffix = "-" + strconv.Itoa(attempt)
	}
	base := dnsLabel(runID)
	budget := maxJobName - len("hangar-") - len(suffix)
	if base != runID || len(base) > budget {
		h := shortHash(runID)
		base = strings.TrimRight(base[:min(len(base), budget-len(h)-1)], "-") + "-" + h
	}
	return "hangar-" + base + suffix
}

// RunLabel is the value of LabelRun for a run: its id when that is a valid label value, else
// its DNS-label form with a hash.
func RunLabel(runID string) string {
	if validLabelValue(runID) {
		return runID
	}
	h := shortHash(runID)
	base := dnsLabel(runID)
	return strings.Trim(base[:min(len(base), 63-len(h)-1)], "-") + "-" + h
}

func dnsLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func validLabelValue(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || i == len(s)-1 || (r != '-' && r != '_' && r != '.')) {
			return false
		}
	}
	return true
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
