package tracking

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		in   string
		want Filter
	}{
		{"", nil},
		{"metrics.acc > 0.5", Filter{{Entity: Metric, Key: "acc", Op: ">", Num: 0.5}}},
		{"metric.`my loss` <= -1e-3 and params.lr = '0.01'", Filter{
			{Entity: Metric, Key: "my loss", Op: "<=", Num: -1e-3},
			{Entity: Param, Key: "lr", Op: "=", Str: "0.01"}}},
		{`tags."mlflow.source.type" LIKE '%NOTE%' AND attributes.status = 'FINISHED'`, Filter{
			{Entity: Tag, Key: "mlflow.source.type", Op: "LIKE", Str: "%NOTE%"},
			{Entity: Attribute, Key: "status", Op: "=", Str: "FINISHED"}}},
		{`tags.t ILIKE "a%"`, Filter{{Entity: Tag, Key: "t", Op: "ILIKE", Str: "a%"}}},
		{"attributes.run_id IN ('a', 'b''c')", Filter{{Entity: Attribute, Key: "run_id", Op: "IN", List: []string{"a", "b'c"}}}},
		{"run.run_id not in ('a')", Filter{{Entity: Attribute, Key: "run_id", Op: "NOT IN", List: []string{"a"}}}},
		{"attributes.start_time>=1700000000000", Filter{{Entity: Attribute, Key: "start_time", Op: ">=", Num: 1.7e12}}},
		{"params.x <> 'y'", Filter{{Entity: Param, Key: "x", Op: "!=", Str: "y"}}},
		{"dataset.name = 'train'", Filter{{Entity: Dataset, Key: "name", Op: "=", Str: "train"}}},
	}
	for _, tt := range tests {
		got, err := ParseFilter(tt.in)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseFilter(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// Errors say what MLflow's say (search_utils.py), so that a user's search of the error finds
// MLflow's documentation.
func TestParseFilterErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"acc > 1", "Invalid identifier 'acc'. Columns should be specified as"},
		{"foo.acc > 1", "Invalid entity type 'foo'"},
		{"attributes.color = 'x'", "Invalid attribute key 'color' specified"},
		{"metrics.acc > 'x'", "Expected numeric value type for metric. Found x"},
		{"params.lr = 0.1", "Expected a quoted string value for parameter (e.g. 'my-value'). Got value 0.1"},
		{"metrics.acc LIKE 1", "Invalid comparator 'LIKE' not one of"},
		{"params.lr > '1'", "Invalid comparator '>' not one of"},
		{"metrics.a > 1 OR metrics.b > 1", "Invalid clause(s) in filter string"},
		{"metrics.a >", "Expected numeric value type for metric. Found "},
		{"tags.t = 'open", "unterminated quoted string"},
		{"attributes.run_id IN ('a', 1)", "While parsing a list in the query"},
		{"attributes.run_id IN 'a'", "expected a non-empty list of string values"},
		{"metrics.a > 1 AND", "Invalid clause(s) in filter string"},
		{"metrics.a ; 1", "unexpected character"},
	}
	for _, tt := range tests {
		_, err := ParseFilter(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseFilter(%q) = %v; want an error containing %q", tt.in, err, tt.want)
		}
		if _, ok := err.(*Error); err != nil && !ok {
			t.Errorf("ParseFilter(%q): error %T is not a *tracking.Error", tt.in, err)
		}
	}
}

func TestWhereSQLBindsEveryValue(t *testing.T) {
	f, err := ParseFilter(`metrics.acc > 0.5 AND params.lr = '0.01' AND tags.t LIKE '%a_*' AND attributes.run_id IN ('x', 'y') AND attributes.status != 'FAILED'`)
	if err != nil {
		t.Fatal(err)
	}
	sql, args := f.WhereSQL()
	want := []any{"acc", 0.5, "lr", "0.01", "t", "*a?[*]", "x", "y", "FAILED"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if n := strings.Count(sql, "?"); n != len(args) {
		t.Errorf("%d placeholders for %d args in %s", n, len(args), sql)
	}
	for _, user := range []string{"acc", "0.01", "lr"} {
		if strings.Contains(sql, user) {
			t.Errorf("user text %q written into the SQL: %s", user, sql)
		}
	}
}

func TestParseOrderBy(t *testing.T) {
	got, err := ParseOrderBy([]string{"metrics.acc DESC", "params.`lr`", "start_time asc", "tags.t ASC"})
	if err != nil {
		t.Fatal(err)
	}
	want := []OrderBy{{Metric, "acc", true}, {Param, "lr", false}, {Attribute, "start_time", false}, {Tag, "t", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	o := OrderSQL(got, nil)
	if diff := cmp.Diff([]any{"acc", "lr", "t"}, o.JoinArgs); diff != "" {
		t.Error(diff)
	}
	if !strings.HasSuffix(o.By, "runs.id ASC") || strings.Contains(o.By, "start_time) / 1000000) DESC") {
		t.Errorf("order %s: want the run id as the last tie-break and no second start_time", o.By)
	}
	for _, bad := range []string{"metrics.acc UP", "metrics.a b c", "attributes.nope", "dataset.name"} {
		if _, err := ParseOrderBy([]string{bad}); err == nil {
			t.Errorf("ParseOrderBy(%q) = nil error", bad)
		}
	}
}

func TestPageToken(t *testing.T) {
	if n, err := ParseToken(PageToken(2000)); err != nil || n != 2000 {
		t.Errorf("round trip = %d, %v", n, err)
	}
	for _, bad := range []string{"!!", "bm90IGpzb24=", PageToken(-1)} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("ParseToken(%q) = nil error", bad)
		}
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"batch metrics", CheckBatch(1001, 0, 0), "at most 1000 metrics. Got 1001"},
		{"batch params", CheckBatch(0, 101, 0), "at most 100 params"},
		{"batch tags", CheckBatch(0, 0, 101), "at most 100 tags"},
		{"batch total", CheckBatch(900, 100, 1), "1001 total entities"},
		{"key chars", CheckKey("metric", "a;b"), "Invalid metric name: 'a;b'"},
		{"key dots", CheckKey("param", "../x"), "cannot contain '..'"},
		{"key length", CheckKey("tag", strings.Repeat("k", 251)), "length 251, which exceeded length limit of 250"},
		{"param value", CheckParam("p", strings.Repeat("v", 6001)), "exceeded length limit of 6000"},
		{"tag value", CheckTag("t", strings.Repeat("v", 8001)), "exceeded length limit of 8000"},
		{"timestamp", CheckMetric("m", 1, -1), "Timestamp must be a nonnegative"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, tt.err, tt.want)
		}
	}
	for _, ok := range []error{CheckBatch(1000, 0, 0), CheckKey("m", "a/b c-d.e_f"), CheckParam("p", strings.Repeat("v", 6000))} {
		if ok != nil {
			t.Error(ok)
		}
	}
}

func TestStatusMapping(t *testing.T) {
	for _, s := range []string{StatusRunning, StatusScheduled, StatusFinished, StatusFailed, StatusKilled} {
		st, err := StateOf(s)
		if err != nil || StatusOf(st) != s {
			t.Errorf("%s -> %s -> %s, %v", s, st, StatusOf(st), err)
		}
	}
	if _, err := StateOf("DONE"); err == nil {
		t.Error("StateOf(DONE) = nil error")
	}
}

// FuzzParseFilter: any string either fails with a *tracking.Error or compiles to SQL with one
// bound argument per placeholder outside quoted SQL literals.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"metrics.acc > 0.5 AND params.lr = '0.01'", "tags.`a b` LIKE '%x%'",
		"attributes.run_id NOT IN ('a','b')", `params."x" != "y"`, "metrics.a>=-1e5", "dataset.context = 'train'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		sql, args := flt.WhereSQL()
		if n := strings.Count(sql, "?"); n != len(args) {
			t.Fatalf("%q: %d placeholders, %d args: %s", s, n, len(args), sql)
		}
	})
}

// FuzzParseOrderBy: any order_by term either fails with a *tracking.Error or compiles to joins
// with one argument per placeholder; with any filter, the WHERE clause stays bound too.
func FuzzParseOrderBy(f *testing.F) {
	for _, s := range []string{"metrics.acc DESC", "params.`lr` asc", "start_time", "tags.\"a b\" DESC", "attributes.run_name"} {
		f.Add(s, "metrics.acc > 1")
	}
	f.Fuzz(func(t *testing.T, term, filter string) {
		o, err := ParseOrderBy([]string{term})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		flt, _ := ParseFilter(filter)
		ord := OrderSQL(o, flt)
		if n := strings.Count(ord.Joins, "?"); n != len(ord.JoinArgs) || strings.Contains(ord.By, "?") {
			t.Fatalf("%q: %d placeholders, %d args: %s / %s", term, n, len(ord.JoinArgs), ord.Joins, ord.By)
		}
		where, args := flt.WhereSQLFor(ord)
		if n := strings.Count(where, "?"); n != len(args) {
			t.Fatalf("%q with %q: %d placeholders, %d args: %s", term, filter, n, len(args), where)
		}
	})
}
