package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hangar-ml/hangar/internal/api"
)

func ptr[T any](v T) *T { return &v }

func TestParseMetric(t *testing.T) {
	tests := []struct {
		line    string
		want    metricLine
		wantErr string // substring; "" = valid
	}{
		{line: `{"name":"loss","value":0.25,"step":3}`, want: metricLine{Name: "loss", Value: ptr(0.25), Step: 3}},
		{line: `{"name":"acc","value":0}`, want: metricLine{Name: "acc", Value: ptr(0.0)}},
		{line: `{"name":"lr","value":-1e-3,"step":7,"timestamp":1700000000.5}`,
			want: metricLine{Name: "lr", Value: ptr(-1e-3), Step: 7, Timestamp: ptr(1700000000.5)}},
		{line: ` {"value": 2, "name": "x", "extra": true} `, want: metricLine{Name: "x", Value: ptr(2.0)}},
		{line: `{"value":1}`, wantErr: `missing "name"`},
		{line: `{"name":"","value":1}`, wantErr: `missing "name"`},
		{line: `{"name":"loss"}`, wantErr: `missing numeric "value"`},
		{line: `{"name":"loss","value":null}`, wantErr: `missing numeric "value"`},
		{line: `{"name":"loss","value":"0.5"}`, wantErr: "not a JSON object"},
		{line: `{"name":"loss","value":1,"step":1.5}`, wantErr: "not a JSON object"},
		{line: `{"name":"loss","value":NaN}`, wantErr: "not a JSON object"},
		{line: `loss=0.5`, wantErr: "not a JSON object"},
		{line: `[1,2]`, wantErr: "not a JSON object"},
		{line: ``, wantErr: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := parseMetric(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseMetric(%q) error = %v, want one containing %q", tt.line, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseMetric(%q): %v", tt.line, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseMetric(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// receiver is a fake server end of log shipping with the store's semantics: lines already held
// are ignored, a batch that starts after a gap stores nothing, the ack is the highest gap-free seq.
type receiver struct {
	held    []string // held[i] is line seq i+1
	batches [][]tailLine
	replies []int64 // the ack answered to each batch, -1 when the call failed
	// behave decides what the call-th call (from 0) does: how many new lines to store at most
	// (-1: all), and whether the call then fails (the answer is lost).
	behave func(call int) (store int, fail bool)
}

func (r *receiver) send(_ context.Context, lines []tailLine) (int64, error) {
	call := len(r.batches)
	r.batches = append(r.batches, append([]tailLine(nil), lines...))
	limit, fail := r.behave(call)
	stored := 0
	for _, l := range lines {
		have := int64(len(r.held))
		if l.seq <= have {
			continue
		}
		if l.seq != have+1 || (limit >= 0 && stored >= limit) {
			break
		}
		r.held = append(r.held, l.text)
		stored++
	}
	if fail {
		r.replies = append(r.replies, -1)
		return 0, fmt.Errorf("call %d: connection reset", call)
	}
	r.replies = append(r.replies, int64(len(r.held)))
	return int64(len(r.held)), nil
}

func TestShipAllLosesAndDuplicatesNothing(t *testing.T) {
	var want []string
	var content strings.Builder
	for i := 1; i <= 4500; i++ {
		want = append(want, fmt.Sprintf("line %d", i))
		fmt.Fprintf(&content, "line %d\n", i)
	}
	content.WriteString("no newline yet")
	path := writeLog(t, content.String())

	behaviours := []struct {
		name  string
		store int
		fail  bool
	}{
		{"refused before storing", 0, true},
		{"stores 700, acks 700", 700, false},
		{"stores 300, answer lost", 300, true},
		{"stores everything, acks", -1, false},
		{"stores nothing, acks nothing new", 0, false},
	}
	r := &receiver{behave: func(call int) (int, bool) {
		b := behaviours[call%len(behaviours)]
		return b.store, b.fail
	}}
	s := newShipper(path, r.send, slog.New(slog.NewTextHandler(io.Discard, nil)))

	shipUntilDone := func(final bool) {
		t.Helper()
		for attempt := 0; ; attempt++ {
			if attempt == 100 {
				t.Fatalf("shipAll did not succeed in 100 attempts; %d lines held", len(r.held))
			}
			if err := s.shipAll(t.Context(), final); err == nil {
				return
			}
		}
	}
	shipUntilDone(false)
	if diff := cmp.Diff(want, r.held); diff != "" {
		t.Fatalf("held after shipping whole lines (-want +got):\n%s", diff)
	}
	appendLog(t, path, " - now complete\nand a last partial")
	shipUntilDone(true)
	want = append(want, "no newline yet - now complete", "and a last partial")
	if diff := cmp.Diff(want, r.held); diff != "" {
		t.Errorf("held after the final shipment (-want +got):\n%s", diff)
	}

	// Every batch starts right after what the shipper had been told was held: it resends
	// only lines whose acknowledgement it never got, and never leaves a gap.
	var acked int64
	for i, b := range r.batches {
		if len(b) == 0 {
			t.Fatalf("batch %d is empty", i)
		}
		if b[0].seq != acked+1 {
			t.Errorf("batch %d starts at seq %d, want %d", i, b[0].seq, acked+1)
		}
		if len(b) > 2000 {
			t.Errorf("batch %d holds %d lines, more than 2000", i, len(b))
		}
		for j := 1; j < len(b); j++ {
			if b[j].seq != b[j-1].seq+1 {
				t.Errorf("batch %d is not consecutive at %d: %d after %d", i, j, b[j].seq, b[j-1].seq)
			}
		}
		if r.replies[i] >= 0 {
			acked = min(r.replies[i], b[len(b)-1].seq)
		}
	}
	if s.t.seq != int64(len(want)) {
		t.Errorf("tail at seq %d after shipping, want %d", s.t.seq, len(want))
	}
}

func TestShipAllErrorsWhenNothingIsAcknowledged(t *testing.T) {
	path := writeLog(t, "a\nb\n")
	calls := 0
	s := newShipper(path, func(_ context.Context, lines []tailLine) (int64, error) {
		calls++
		return 0, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	err := s.shipAll(t.Context(), false)
	if err == nil || !strings.Contains(err.Error(), "acknowledged 0") {
		t.Fatalf("shipAll = %v, want an error about the acknowledgement", err)
	}
	if calls != 1 {
		t.Errorf("send called %d times, want 1 (no busy loop)", calls)
	}
	if s.t.seq != 0 || s.t.offset != 0 {
		t.Errorf("tail moved to seq %d offset %d without an ack", s.t.seq, s.t.offset)
	}
}

// The background loop may still be sending when the final shipment starts (the case CI met:
// "server acknowledged 35, expected more than 35"). The two take turns, and neither reports
// an error for lines the other had shipped.
func TestShipAllConcurrentShipmentsTakeTurns(t *testing.T) {
	path := writeLog(t, "a\nb\nc\n")
	inFirst, release := make(chan struct{}), make(chan struct{})
	var held int64
	var sends int
	s := newShipper(path, func(_ context.Context, lines []tailLine) (int64, error) {
		sends++
		if sends == 1 {
			close(inFirst)
			<-release
		}
		for _, l := range lines {
			if l.seq == held+1 {
				held = l.seq
			}
		}
		return held, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first := make(chan error, 1)
	go func() { first <- s.shipAll(t.Context(), false) }()
	<-inFirst
	second := make(chan error, 1)
	go func() { second <- s.shipAll(t.Context(), true) }()
	// Give the second shipment time to reach the file while the first is sending. The pause
	// only makes the test sensitive: it passes whatever the timing when shipments take turns.
	time.Sleep(50 * time.Millisecond)
	close(release)
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Errorf("shipAll = %v, want nil", err)
		}
	}
	if held != 3 || sends != 1 {
		t.Errorf("held %d lines in %d sends, want 3 in 1 (the second shipment had nothing left)", held, sends)
	}
}

func TestShipAllReturnsSendError(t *testing.T) {
	path := writeLog(t, "a\n")
	boom := errors.New("boom")
	s := newShipper(path, func(context.Context, []tailLine) (int64, error) { return 0, boom },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.shipAll(t.Context(), false); !errors.Is(err, boom) {
		t.Fatalf("shipAll = %v, want %v", err, boom)
	}
}

func TestShipAllNothingToSend(t *testing.T) {
	path := writeLog(t, "partial only")
	s := newShipper(path, func(context.Context, []tailLine) (int64, error) {
		t.Error("send called with nothing whole to send")
		return 0, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.shipAll(t.Context(), false); err != nil {
		t.Fatal(err)
	}
}

func TestMetricSender(t *testing.T) {
	var got []api.MetricBatch
	ackWith := int64(-1) // -1: the highest seq received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/runs/r1/metrics" || r.Header.Get("Authorization") != "Bearer run-token" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		var b api.MetricBatch
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Error(err)
		}
		got = append(got, b)
		ack := ackWith
		if ack < 0 {
			ack = b.Metrics[len(b.Metrics)-1].Seq
		}
		_ = json.NewEncoder(w).Encode(api.Ack{Acked: ack})
	}))
	defer srv.Close()
	c := &conn{c: api.NewClient(srv.URL, "run-token"), log: slog.New(slog.NewTextHandler(io.Discard, nil)), maxBackoff: time.Second}
	var warnings []string
	send := metricSender(c, "r1", 1, func(s string) { warnings = append(warnings, s) })
	lines := []tailLine{
		{seq: 1, text: `{"name":"loss","value":0.5,"step":1,"timestamp":1700000000.5}`},
		{seq: 2, text: `loss=0.4`},
		{seq: 3, text: `{"name":"loss","value":0.25,"step":2}`},
		{seq: 4, text: `{"name":"loss"}`},
	}

	acked, err := send(t.Context(), lines)
	if err != nil {
		t.Fatal(err)
	}
	if acked != 4 {
		t.Errorf("acked %d, want 4: the server holds every valid metric, so the invalid last line is done too", acked)
	}
	if len(got) != 1 || len(got[0].Metrics) != 2 {
		t.Fatalf("batches %+v, want one with the two valid metrics", got)
	}
	m0, m1 := got[0].Metrics[0], got[0].Metrics[1]
	if m0.Seq != 1 || m0.Name != "loss" || m0.Value != 0.5 || m0.Step != 1 || !m0.Time.Equal(time.Unix(1700000000, 5e8)) {
		t.Errorf("first metric %+v", m0)
	}
	if m1.Seq != 3 || m1.Value != 0.25 || m1.Time.IsZero() {
		t.Errorf("second metric %+v", m1)
	}
	want := []string{
		"metrics file line 2 ignored: not a JSON object: invalid character 'l' looking for beginning of value",
		`metrics file line 4 ignored: missing numeric "value"`,
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}

	// A partial acknowledgement is passed on as is.
	ackWith = 1
	if acked, err := send(t.Context(), lines); err != nil || acked != 1 {
		t.Errorf("with the server holding up to 1: acked %d, %v", acked, err)
	}
	// Nothing valid: nothing is sent, and the lines are done.
	n := len(got)
	if acked, err := send(t.Context(), lines[1:2]); err != nil || acked != 2 || len(got) != n {
		t.Errorf("only an invalid line: acked %d, %v, %d requests", acked, err, len(got)-n)
	}
}

func TestLogSender(t *testing.T) {
	var got api.LogBatch
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		_ = json.NewEncoder(w).Encode(api.Ack{Acked: 1})
	}))
	defer srv.Close()
	c := &conn{c: api.NewClient(srv.URL, "tok"), log: slog.New(slog.NewTextHandler(io.Discard, nil)), maxBackoff: time.Second}
	acked, err := logSender(c, "r1", StdLogFile)(t.Context(), []tailLine{{seq: 1, text: "a"}, {seq: 2, text: "b"}})
	if err != nil || acked != 1 {
		t.Fatalf("acked %d, %v", acked, err)
	}
	if got.File != StdLogFile || len(got.Lines) != 2 || got.Lines[0].Seq != 1 || got.Lines[1].Text != "b" {
		t.Errorf("batch %+v", got)
	}
}

// A server restored from a backup has fewer lines than it acknowledged; the shipper sends the
// missing ones again from its spool, in order, and goes on.
func TestShipAllResendsWhatARestoredServerLost(t *testing.T) {
	var content strings.Builder
	var want []string
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&content, "line %d\n", i)
		want = append(want, fmt.Sprintf("line %d", i))
	}
	path := writeLog(t, content.String())
	r := &receiver{behave: func(int) (int, bool) { return -1, false }}
	s := newShipper(path, r.send, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := s.shipAll(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	r.held = r.held[:4] // the restore: the server has lines 1-4 only
	for i := 11; i <= 12; i++ {
		appendLog(t, path, fmt.Sprintf("line %d\n", i))
		want = append(want, fmt.Sprintf("line %d", i))
	}
	if err := s.shipAll(t.Context(), false); err != nil {
		t.Fatalf("shipAll after the server lost lines: %v", err)
	}
	if diff := cmp.Diff(want, r.held); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	if s.t.seq != 12 {
		t.Errorf("tail at seq %d, want 12", s.t.seq)
	}
}
