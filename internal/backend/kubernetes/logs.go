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
func (b *Backend) ContainerLog(ctx context.Context, hb backend.Handle, since time.Time, follow time.Duration) (io.ReadCloser, error) {
	hd, c, err := b.resolve(ctx, hb)
	if err != nil {
		return nil, err
	}
	_, pods, err := c.observe(ctx, hd)
	if err != nil {
		return nil, err
	}
	pod, ok := servingPod(pods)
	if !ok {
		return io.NopCloser(strings.NewReader("")), nil
	}
	opts := &corev1.PodLogOptions{Container: serveContainer, Timestamps: true, Follow: follow > 0}
	if !since.IsZero() {
		t := metav1.NewTime(since.Truncate(time.Second))
		opts.SinceTime = &t
	}
	sctx, cancel := context.WithCancel(ctx)
	if follow > 0 {
		sctx, cancel = context.WithTimeout(ctx, follow)
	}
	rc, err := c.cs.CoreV1().Pods(hd.Namespace).GetLogs(pod, opts).Stream(sctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("read the log of container %s of pod %s: %w", serveContainer, pod, err)
	}
	pr, pw := io.Pipe()
	go func() {
		defer cancel()
		defer rc.Close()
		err := copyAfter(pw, rc, since)
		if sctx.Err() != nil { // the follow's deadline, or the reader closed: the end, no error
			err = nil
		}
		pw.CloseWithError(err)
	}()
	return &logStream{PipeReader: pr, cancel: cancel}, nil
}

// servingPod is the run's pod whose serving container has started (running or ended): before
// that Kubernetes has no log to give.
func servingPod(pods []corev1.Pod) (string, bool) {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == serveContainer && (cs.State.Running != nil || cs.State.Terminated != nil) {
				return p.Name, true
			}
		}
	}
	return "", false
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
