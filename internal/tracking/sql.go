package tracking

import (
	"fmt"
	"strings"
)

// The SQL compiled here reads these tables (migration 0008): runs, latest_metrics, run_params,
// run_tags, run_inputs. Every user-given key and value is a bound parameter; only column names
// chosen from the fixed lists below are written into the text.

// statusExpr is a run's MLflow status from its Hangar state (StatusOf, in SQL).
const statusExpr = `(CASE runs.status WHEN 'Completed' THEN 'FINISHED' WHEN 'Failed' THEN 'FAILED' ` +
	`WHEN 'Canceled' THEN 'KILLED' WHEN 'Running' THEN 'RUNNING' WHEN 'Finalizing' THEN 'RUNNING' ` +
	`WHEN 'CancelRequested' THEN 'RUNNING' WHEN 'NotResponding' THEN 'RUNNING' ELSE 'SCHEDULED' END)`

// attributeExpr is the SQL expression of a run attribute (times in milliseconds, as MLflow's).
func attributeExpr(key string) string {
	switch key {
	case "run_id":
		return "runs.id"
	case "run_name":
		return "runs.display_name"
	case "status":
		return statusExpr
	case "user_id":
		return "runs.user_id"
	case "lifecycle_stage":
		return "runs.lifecycle_stage"
	case "artifact_uri":
		return `('mlflow-artifacts:/' || runs.experiment_id || '/' || runs.id || '/artifacts')`
	case "start_time":
		return "(COALESCE(runs.started_at, runs.created_at) / 1000000)"
	case "end_time":
		return "(runs.ended_at / 1000000)"
	case "created":
		return "(runs.created_at / 1000000)"
	}
	return ""
}

// ArtifactURI is a run's artifact_uri: where MLflow clients put its artifacts, through the
// mlflow-artifacts proxy (as `mlflow server --serve-artifacts` answers).
func ArtifactURI(experimentID, runID string) string {
	return "mlflow-artifacts:/" + experimentID + "/" + runID + "/artifacts"
}

// WhereSQL compiles a filter to a condition on the table runs and its arguments; an empty
// filter is "1 = 1".
func (f Filter) WhereSQL() (string, []any) { return f.WhereSQLFor(Order{}) }

// WhereSQLFor is WhereSQL beside the joins of order o: a clause on a metric that o joins
// compares the joined row instead of a subquery.
func (f Filter) WhereSQLFor(o Order) (string, []any) {
	if len(f) == 0 {
		return "1 = 1", nil
	}
	parts := make([]string, len(f))
	var args []any
	for i, c := range f {
		var a []any
		if alias, ok := o.metrics[c.Key]; ok && c.Entity == Metric {
			parts[i], a = alias+".value "+c.Op+" ?", []any{c.Num}
		} else {
			parts[i], a = c.sql()
		}
		args = append(args, a...)
	}
	return strings.Join(parts, " AND "), args
}

func (c Clause) sql() (string, []any) {
	switch c.Entity {
	case Metric:
		return fmt.Sprintf("runs.id IN (SELECT run_id FROM latest_metrics WHERE name = ? AND value %s ?)", c.Op),
			[]any{c.Key, c.Num}
	case Tag:
		if col := tagColumn(c.Key); col != "" {
			cond, a := compare(col, c)
			return "(" + col + " != '' AND " + cond + ")", a
		}
		fallthrough
	case Param:
		table := map[Entity]string{Param: "run_params", Tag: "run_tags"}[c.Entity]
		cond, a := compare("value", c)
		return fmt.Sprintf("runs.id IN (SELECT run_id FROM %s WHERE key = ? AND %s)", table, cond), append([]any{c.Key}, a...)
	case Dataset:
		col := "name"
		if c.Key == "digest" {
			col = "digest"
		}
		if c.Key == "context" {
			cond, a := compare("json_extract(t.value, '$.value')", c)
			return "runs.id IN (SELECT i.run_id FROM run_inputs i, json_each(i.tags) t WHERE " +
				"json_extract(t.value, '$.key') = 'mlflow.data.context' AND " + cond + ")", a
		}
		cond, a := compare(col, c)
		return "runs.id IN (SELECT run_id FROM run_inputs WHERE " + cond + ")", a
	}
	if c.Numeric() {
		return attributeExpr(c.Key) + " " + c.Op + " ?", []any{c.Num}
	}
	return compare(attributeExpr(c.Key), c)
}

// tagColumn is the column of runs that holds a tag MLflow clients read and write as a tag
// (TagRunName, TagNote), or "" for a tag kept in run_tags.
func tagColumn(key string) string {
	switch key {
	case TagRunName:
		return "runs.display_name"
	case TagNote:
		return "runs.description"
	}
	return ""
}

// compare is a string comparison of expr. MLflow's LIKE is case-sensitive (SQLite's is not):
// it becomes a GLOB; ILIKE is SQLite's LIKE.
func compare(expr string, c Clause) (string, []any) {
	switch c.Op {
	case "LIKE":
		return expr + " GLOB ?", []any{likeToGlob(c.Str)}
	case "ILIKE":
		return expr + ` LIKE ? ESCAPE '\'`, []any{c.Str}
	case "IN", "NOT IN":
		args := make([]any, len(c.List))
		for i, v := range c.List {
			args[i] = v
		}
		return expr + " " + c.Op + " (?" + strings.Repeat(", ?", len(c.List)-1) + ")", args
	}
	return expr + " " + c.Op + " ?", []any{c.Str}
}

// likeToGlob turns a LIKE pattern (% any string, _ one character) into the GLOB pattern that
// matches the same strings, case-sensitively; GLOB's own wildcards in the text are literal.
func likeToGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '%':
			b.WriteByte('*')
		case '_':
			b.WriteByte('?')
		case '*', '?', '[':
			b.WriteString("[" + string(r) + "]")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
