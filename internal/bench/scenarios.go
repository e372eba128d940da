package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// Row is one line of a results table.
type Row struct {
	Name     string
	Median   time.Duration
	Samples  []time.Duration
	Bytes    int64 // bytes sent by the client (-1 when not measured)
	Baseline string
	Ratio    float64
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func timeIt(fn func() error) (time.Duration, error) {
	start := time.Now()
	err := fn()
	return time.Since(start), err
}

// timeInto times fn and, when it succeeds, adds the time to samples.
func timeInto(samples *[]time.Duration, fn func() error) error {
	d, err := timeIt(fn)
	if err == nil {
		*samples = append(*samples, d)
	}
	return err
}

// Sleep1 compares `hangar job create --stream` of a job running `sleep 1` with running `sleep 1`
// directly, interleaved, n times each, on a warm server.
func Sleep1(ctx context.Context, w *Workspace, dir string, n int) ([]Row, error) {
	file := filepath.Join(dir, "sleep1.yml")
	if err := os.WriteFile(file, []byte("command: sleep 1\ncompute: local\n"), 0o644); err != nil {
		return nil, err
	}
	if _, err := w.Run(ctx, "job", "create", "-f", file, "--stream"); err != nil { // warm up
		return nil, err
	}
	var bare, hangar []time.Duration
	for i := 0; i < n; i++ {
		if err := timeInto(&bare, func() error { return exec.CommandContext(ctx, "sleep", "1").Run() }); err != nil {
			return nil, err
		}
		err := timeInto(&hangar, func() error { _, err := w.Run(ctx, "job", "create", "-f", file, "--stream"); return err })
		if err != nil {
			return nil, err
		}
	}
	return pair("`sleep 1` directly", bare, "`hangar job create --stream` of `sleep 1`", hangar), nil
}

// Tree10k measures submitting a code tree of `files` files, reps times (with fresh content each
// time): first submission, unchanged resubmission (hash cache warm), unchanged with the client's
// hash cache removed; the baseline is a `tar -c | tar -x` copy of the same tree (what a tool that
// sends everything every time costs at least), run in the same repetition.
func Tree10k(ctx context.Context, w *Workspace, dir string, files, size, reps int) ([]Row, error) {
	cases := []string{"first submission", "unchanged resubmission", "unchanged, client hash cache removed"}
	times := make([][]time.Duration, len(cases))
	bytes := make([]int64, len(cases))
	var base []time.Duration
	var baseBytes int64
	for rep := 0; rep < reps; rep++ {
		root := filepath.Join(dir, fmt.Sprintf("tree%d", rep))
		src := filepath.Join(root, "src")
		if err := makeTree(src, files, size); err != nil {
			return nil, err
		}
		file := filepath.Join(root, "job.yml")
		if err := os.WriteFile(file, []byte("command: \"true\"\ncode: src\n"), 0o644); err != nil {
			return nil, err
		}
		d, n, err := copyTree(ctx, src, filepath.Join(root, "copy"))
		if err != nil {
			return nil, err
		}
		base, baseBytes = append(base, d), n
		w.proxy.Upstream()
		for i := range cases {
			if i == 2 {
				_ = os.RemoveAll(filepath.Join(w.Home, "cache", "file-hashes.json"))
			}
			d, err := timeIt(func() error { _, err := w.Run(ctx, "job", "create", "-f", file); return err })
			if err != nil {
				return nil, err
			}
			times[i] = append(times[i], d)
			bytes[i] = w.proxy.Upstream()
		}
		_ = os.RemoveAll(root)
	}
	b := Row{Name: fmt.Sprintf("baseline: `tar -c \\| tar -x` copy of the tree (%d files × %d B)", files, size),
		Median: median(base), Samples: base, Bytes: baseBytes, Ratio: 1}
	rows := []Row{b}
	for i, name := range cases {
		rows = append(rows, Row{Name: name, Median: median(times[i]), Samples: times[i], Bytes: bytes[i],
			Baseline: b.Name, Ratio: float64(median(times[i])) / float64(b.Median)})
	}
	return rows, nil
}

func makeTree(root string, files, size int) error {
	buf := make([]byte, size)
	for i := 0; i < files; i++ {
		p := filepath.Join(root, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d.py", i))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		if _, err := rand.Read(buf); err != nil {
			return err
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies dir to dest with `tar -c | tar -x` (the least a tool that sends the whole tree
// does) and returns the time and the bytes that crossed the pipe.
func copyTree(ctx context.Context, dir, dest string) (time.Duration, int64, error) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return 0, 0, err
	}
	c := exec.CommandContext(ctx, "tar", "-C", dir, "-cf", "-", ".")
	x := exec.CommandContext(ctx, "tar", "-C", dest, "-xf", "-")
	out, err := c.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	in, err := x.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if err := c.Start(); err != nil {
		return 0, 0, err
	}
	if err := x.Start(); err != nil {
		return 0, 0, err
	}
	n, err := io.Copy(in, out)
	in.Close()
	if err != nil {
		return 0, 0, err
	}
	if err := errors.Join(c.Wait(), x.Wait()); err != nil {
		return 0, 0, err
	}
	return time.Since(start), n, nil
}
