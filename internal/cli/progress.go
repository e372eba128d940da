package cli

import (
	"context"
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/hangar-ml/hangar/internal/snapshot"
)

// Long transfers draw a progress bar (on stderr) when a person watches: stdout and stderr are
// both terminals. Otherwise (a pipe, a file, CI) nothing is drawn: the one-line summary each
// transfer prints afterwards is all a log gets.

// progressWanted is the decision, apart from how the terminals are found.
func progressWanted(stdoutTerminal, stderrTerminal bool) bool {
	return stdoutTerminal && stderrTerminal
}

// bar is one transfer's progress; a nil *bar draws nothing.
type bar struct {
	p *mpb.Progress
	b *mpb.Bar
}

// newBar starts a bar of total bytes labelled label, or returns nil when no one watches.
func (e *Env) newBar(ctx context.Context, label string, total int64) *bar {
	if !progressWanted(isTerminal(e.Stdout), isTerminal(e.Stderr)) {
		return nil
	}
	p := mpb.NewWithContext(ctx, mpb.WithOutput(e.Stderr), mpb.WithWidth(40))
	b := p.AddBar(total,
		mpb.PrependDecorators(decor.Name(label+" ", decor.WC{W: len(label) + 1})),
		mpb.AppendDecorators(decor.CountersKiloByte("% .1f / % .1f "), decor.Percentage()))
	return &bar{p: p, b: b}
}

// set moves the bar to n bytes done.
func (b *bar) set(n int64) {
	if b != nil {
		b.b.SetCurrent(n)
	}
}

// add moves the bar n bytes on.
func (b *bar) add(n int) {
	if b != nil {
		b.b.IncrBy(n)
	}
}

// done completes the bar (a transfer that skipped what the other side had ends short of its
// total) and waits until it is drawn, before the summary line is printed under it.
func (b *bar) done() {
	if b == nil {
		return
	}
	b.b.SetTotal(-1, true)
	b.p.Wait()
}

// countingSource moves a bar as blobs are read from a source (downloads).
type countingSource struct {
	src snapshot.Source
	bar *bar
}

func (c countingSource) Open(ctx context.Context, hash string) (io.ReadCloser, error) {
	r, err := c.src.Open(ctx, hash)
	if err != nil || c.bar == nil {
		return r, err
	}
	return &countingReader{ReadCloser: r, bar: c.bar}, nil
}

type countingReader struct {
	io.ReadCloser
	bar *bar
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.bar.add(n)
	return n, err
}
