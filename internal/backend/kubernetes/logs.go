package kubernetes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hangar-ml/hangar/internal/backend"
)

var _ backend.ContainerLogger = (*Backend)(nil)

// maxLogLine bounds one line of the serving container's output (a longer one is cut).
const maxLogLine = 1 << 20

// ContainerLog reads the output of a replica pod's serving container (the image that serves by
// its own entrypoint, sidecar.go) through the API server (pods/log), which the supervisor beside
// it cannot: the pod has no Kubernetes credentials. Kubernetes' sinceTime has whole seconds, so
// the lines of since's second that are not after it are dropped here.
//
// When the kubelet has restarted the image since then, the stream is what the ended container
// wrote after since, a line of Hangar's saying so (stamped at the end of the second Kubernetes
// gives as its end, after its last line and before the next container's first), then the
// running container's output.
func (b *Backend) ContainerLog(ctx context.Context, hb backend.Handle, since time.Time, follow time.Duration) (io.ReadCloser, error) {
	hd, c, err := b.resolve(ctx, hb)
	if err != nil {
		return nil, err
	}
	pod, err := c.servingPodOf(ctx, hd)
	if err != nil || pod == nil {
		return io.NopCloser(strings.NewReader("")), err
	}
	status, _ := serveStatus(*pod)
	restart := restartLine(status, since)
	sctx, cancel := context.WithCancel(ctx)
	if follow > 0 {
		sctx, cancel = context.WithTimeout(ctx, follow)
	}
	var cur io.ReadCloser
	if status.State.Running != nil || status.State.Terminated != nil {
		opts := &corev1.PodLogOptions{Container: serveContainer, Timestamps: true, Follow: follow > 0, SinceTime: sinceTime(since)}
		if cur, err = c.cs.CoreV1().Pods(hd.Namespace).GetLogs(pod.Name, opts).Stream(sctx); err != nil {
			cancel()
			return nil, fmt.Errorf("read the log of container %s of pod %s: %w", serveContainer, pod.Name, err)
		}
	}
	pr, pw := io.Pipe()
	go func() {
		defer cancel()
		err := c.copyPrevious(sctx, pw, hd.Namespace, pod.Name, restart, since)
		if err == nil && restart != "" {
			_, err = io.WriteString(pw, restart)
		}
		if err == nil && cur != nil {
			err = copyAfter(pw, cur, since)
		}
		if cur != nil {
			cur.Close()
		}
		if sctx.Err() != nil { // the follow's deadline, or the reader closed: the end, no error
			err = nil
		}
		pw.CloseWithError(err)
	}()
	return &logStream{PipeReader: pr, cancel: cancel}, nil
}

// copyPrevious copies what the image's ended container wrote after since, when it was restarted
// since then (restart is its line); Kubernetes may have let that log go: then nothing.
func (c *client) copyPrevious(ctx context.Context, w io.Writer, ns, pod, restart string, since time.Time) error {
	if restart == "" {
		return nil
	}
	opts := &corev1.PodLogOptions{Container: serveContainer, Timestamps: true, Previous: true, SinceTime: sinceTime(since)}
	rc, err := c.cs.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return nil
	}
	defer rc.Close()
	return copyAfter(w, rc, since)
}

func sinceTime(since time.Time) *metav1.Time {
	if since.IsZero() {
		return nil
	}
	t := metav1.NewTime(since.Truncate(time.Second))
	return &t
}

// restartLine is the log line that says the kubelet restarted the image after since ("" when it
// did not): its exit code and the restart's number.
func restartLine(cs corev1.ContainerStatus, since time.Time) string {
	t := cs.LastTerminationState.Terminated
	if cs.RestartCount == 0 || t == nil {
		return ""
	}
	at := t.FinishedAt.Time.Truncate(time.Second).Add(time.Second - time.Nanosecond)
	if !at.After(since) {
		return ""
	}
	return fmt.Sprintf("%s the image exited with code %d; Kubernetes restarts it (restart %d)\n",
		at.UTC().Format(time.RFC3339Nano), t.ExitCode, cs.RestartCount)
}

// servingPodOf is the pod of the replica's Deployment that claimed it, when that pod runs an
// image of its own; nil while there is none (a Job's pod never does).
func (c *client) servingPodOf(ctx context.Context, hd handle) (*corev1.Pod, error) {
	if hd.Deployment == "" {
		return nil, nil
	}
	_, _, e, ok, err := c.replicaOf(ctx, hd)
	if err != nil || !ok || e.Pod == "" {
		return nil, err
	}
	p, err := c.pod(ctx, hd.Namespace, e.Pod, e.PodUID)
	if err != nil || p == nil || p.Annotations[AnnotationRunID] != hd.Run {
		return nil, err
	}
	if _, ok := serveStatus(*p); !ok {
		return nil, nil
	}
	return p, nil
}

// serveStatus is the status of the pod's serving container, when it has one.
func serveStatus(p corev1.Pod) (corev1.ContainerStatus, bool) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == serveContainer {
			return cs, true
		}
	}
	return corev1.ContainerStatus{}, false
}

// copyAfter copies the lines of r stamped after since, cutting a line longer than maxLogLine.
func copyAfter(w io.Writer, r io.Reader, since time.Time) error {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Keep the start (a copy: line is the reader's buffer), skip the rest of the line.
			line = append(line[:len(line):len(line)], '\n')
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(line) > 0 && after(line, since) {
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// after says whether a "<RFC 3339 time> <text>" line was written after since.
func after(line []byte, since time.Time) bool {
	if since.IsZero() {
		return true
	}
	stamp, _, _ := strings.Cut(string(line[:min(len(line), 40)]), " ")
	t, err := time.Parse(time.RFC3339Nano, stamp)
	return err != nil || t.After(since)
}

// logStream stops the API server's stream when its reader is closed.
type logStream struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (l *logStream) Close() error {
	l.cancel()
	return l.PipeReader.Close()
}
