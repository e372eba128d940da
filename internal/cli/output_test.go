package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/hangar-ml/hangar/internal/spec"
)

// yamlSample has fields out of alphabetical order and values whose YAML type is easy to get wrong.
type yamlSample struct {
	Zeta     string            `json:"zeta"`
	Count    int               `json:"count"`
	Ratio    float64           `json:"ratio"`
	OK       bool              `json:"ok"`
	Missing  *int              `json:"missing"`
	Number   string            `json:"number_text"`
	Float    string            `json:"float_text"`
	True     string            `json:"true_text"`
	Null     string            `json:"null_text"`
	Empty    string            `json:"empty"`
	Colon    string            `json:"colon"`
	Comment  string            `json:"comment"`
	Lines    string            `json:"lines"`
	Created  time.Time         `json:"created"`
	Plain    string            `json:"plain"`
	Items    []any             `json:"items"`
	Tags     map[string]string `json:"tags"`
	Omitted  string            `json:"omitted,omitempty"`
	Embedded struct {
		B int `json:"b"`
		A int `json:"a"`
	} `json:"embedded"`
}

func TestWriteYAML(t *testing.T) {
	v := yamlSample{
		Zeta: "last letter", Count: 3, Ratio: 0.25, OK: true,
		Number: "42", Float: "1e3", True: "true", Null: "null", Colon: "key: value", Comment: "a #b",
		Lines: "one\ntwo", Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Plain: "hello world",
		Items: []any{1, "2", 3.5, false}, Tags: map[string]string{"team": "ml", "env": "007"},
	}
	v.Embedded.B, v.Embedded.A = 2, 1
	var buf bytes.Buffer
	if err := writeYAML(&buf, v); err != nil {
		t.Fatal(err)
	}
	want := `zeta: last letter
count: 3
ratio: 0.25
ok: true
missing: null
number_text: "42"
float_text: "1e3"
true_text: "true"
null_text: "null"
empty: ""
colon: "key: value"
comment: "a #b"
lines: "one\ntwo"
created: "2025-01-02T03:04:05Z"
plain: hello world
items:
  - 1
  - "2"
  - 3.5
  - false
tags:
  env: "007"
  team: ml
embedded:
  b: 2
  a: 1
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("YAML (-want +got):\n%s", diff)
	}

	// Read back, every value keeps its JSON type.
	var back map[string]any
	if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	wantBack := map[string]any{
		"zeta": "last letter", "count": 3, "ratio": 0.25, "ok": true, "missing": nil,
		"number_text": "42", "float_text": "1e3", "true_text": "true", "null_text": "null", "empty": "",
		"colon": "key: value", "comment": "a #b", "lines": "one\ntwo", "created": "2025-01-02T03:04:05Z",
		"plain": "hello world", "items": []any{1, "2", 3.5, false},
		"tags": map[string]any{"team": "ml", "env": "007"}, "embedded": map[string]any{"a": 1, "b": 2},
	}
	if diff := cmp.Diff(wantBack, back); diff != "" {
		t.Errorf("YAML read back (-want +got):\n%s", diff)
	}
}

func TestWriteYAMLList(t *testing.T) {
	var buf bytes.Buffer
	if err := writeYAML(&buf, []map[string]int{{"n": 1}, {"n": 2}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("- n: 1\n- n: 2\n", buf.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := writeYAML(&buf, func() {}); err == nil {
		t.Error("writeYAML accepted a value JSON cannot encode")
	}
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{999, "999 B"},
		{1000, "1.0 kB"},
		{1500, "1.5 kB"},
		{1_000_000, "1.0 MB"},
		{12_345_678, "12.3 MB"},
		{1 << 30, "1.1 GB"},
		{5_000_000_000_000, "5.0 TB"},
		{1<<63 - 1, "9.2 EB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestFmtDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"},
		{1500 * time.Microsecond, "1ms"},
		{999 * time.Millisecond, "999ms"},
		{time.Second, "1.0s"},
		{12345 * time.Millisecond, "12.3s"},
		{time.Minute, "1m0s"},
		{90*time.Second + 400*time.Millisecond, "1m30s"},
		{2*time.Hour + 30*time.Second, "2h0m30s"},
	}
	for _, tt := range tests {
		if got := fmtDuration(tt.d); got != tt.want {
			t.Errorf("fmtDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestHumanUnitsRoundIntoNextUnit(t *testing.T) {
	if got := humanBytes(999_999); got != "1.0 MB" {
		t.Errorf("humanBytes(999999) = %q, want %q", got, "1.0 MB")
	}
	if got := fmtDuration(59960 * time.Millisecond); got != "1m0s" {
		t.Errorf("fmtDuration(59.96s) = %q, want %q", got, "1m0s")
	}
}

func TestSpecError(t *testing.T) {
	one := &spec.Error{File: "job.yml", Path: "inputs.lr", Line: 7, Msg: `expected number, got "abc"`}
	two := &spec.Error{File: "job.yml", Path: "command", Line: 9, Msg: "required"}
	plain := errors.New("read job.yml: permission denied")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"plain error unchanged", plain, "read job.yml: permission denied"},
		{"a single problem reads as itself", spec.ErrorList{one}, `job.yml: inputs.lr: expected number, got "abc" (line 7)`},
		{
			name: "several problems, one per line",
			err:  spec.ErrorList{one, two},
			want: "2 problems:\n  job.yml: inputs.lr: expected number, got \"abc\" (line 7)\n  job.yml: command: required (line 9)",
		},
		{
			name: "found through wrapping",
			err:  fmt.Errorf("parse: %w", spec.ErrorList{one, two}),
			want: "2 problems:\n  job.yml: inputs.lr: expected number, got \"abc\" (line 7)\n  job.yml: command: required (line 9)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := specError(tt.err)
			if diff := cmp.Diff(tt.want, got.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			var e *spec.Error
			if _, isList := tt.err.(spec.ErrorList); isList && len(tt.err.(spec.ErrorList)) == 1 && !errors.As(got, &e) {
				t.Error("a single problem lost its *spec.Error")
			}
		})
	}
	if got := specError(plain); got != plain {
		t.Errorf("specError(plain) = %v, want the same error", got)
	}
}
