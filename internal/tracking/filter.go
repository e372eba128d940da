package tracking

import (
	"fmt"
	"strconv"
	"strings"
)

// Entity is what a filter or order-by clause compares: a run's latest metric, a param, a tag,
// an attribute of the run itself, or an attribute of its datasets.
type Entity string

// The entities of MLflow's search grammar.
const (
	Metric    Entity = "metric"
	Param     Entity = "parameter"
	Tag       Entity = "tag"
	Attribute Entity = "attribute"
	Dataset   Entity = "dataset"
)

// entityNames are the prefixes MLflow accepts for each entity (SearchUtils._valid_entity_type).
var entityNames = map[string]Entity{
	"metric": Metric, "metrics": Metric,
	"param": Param, "params": Param, "parameter": Param, "parameters": Param,
	"tag": Tag, "tags": Tag,
	"attribute": Attribute, "attributes": Attribute, "attr": Attribute, "run": Attribute,
	"dataset": Dataset, "datasets": Dataset,
}

// Run attributes that a filter may name, split by the type of their values.
var (
	stringAttributes  = []string{"run_id", "run_name", "status", "user_id", "artifact_uri", "lifecycle_stage"}
	numericAttributes = []string{"start_time", "end_time", "created"}
	// numericKeys are the attributes, of runs, experiments, model versions and logged models,
	// compared as numbers.
	numericKeys = []string{"start_time", "end_time", "created", "creation_time", "last_update_time", "version_number",
		"creation_timestamp", "last_updated_timestamp"}
	datasetAttributes = []string{"name", "digest", "context"}
)

// Clause is one comparison of a filter: Entity.Key Op Value.
type Clause struct {
	Entity Entity
	Key    string
	Op     string // upper case: =, !=, <, <=, >, >=, LIKE, ILIKE, IN, NOT IN
	// Str is the value of a string comparison, Num of a numeric one, List of IN and NOT IN.
	Str  string
	Num  float64
	List []string
}

// Filter is a parsed filter string: its clauses, all of which must hold.
type Filter []Clause

// ParseFilter parses an MLflow search filter: clauses joined by AND, e.g.
// `metrics.acc > 0.9 AND params."lr" = '0.01' AND tags.team LIKE 'vis%'`. An empty string is
// no filter.
func ParseFilter(s string) (Filter, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	return parse(s, toks, identifier)
}

// parse parses clauses joined by AND; ident reads the identifier of a clause.
func parse(s string, toks []token, ident func(string) (Clause, error)) (Filter, error) {
	p := &parser{src: s, toks: toks, ident: ident}
	var f Filter
	for !p.done() {
		if len(f) > 0 {
			if t := p.next(); t.kind != tkWord || !strings.EqualFold(t.text, "AND") {
				return nil, invalidf("Invalid clause(s) in filter string: '%s'. Clauses are joined by AND (MLflow has no OR)", s)
			}
		}
		c, err := p.clause()
		if err != nil {
			return nil, err
		}
		f = append(f, c)
		if len(f) > MaxFilterClauses {
			return nil, invalidf("Invalid filter string '%s': more than %d clauses", s, MaxFilterClauses)
		}
	}
	return f, nil
}

type parser struct {
	src   string
	toks  []token
	i     int
	ident func(string) (Clause, error)
}

func (p *parser) done() bool { return p.i >= len(p.toks) }

func (p *parser) next() token {
	if p.done() {
		return token{kind: tkEnd}
	}
	p.i++
	return p.toks[p.i-1]
}

func (p *parser) clause() (Clause, error) {
	id := p.next()
	if id.kind != tkIdent && id.kind != tkWord {
		return Clause{}, invalidf("Invalid clause(s) in filter string: '%s'. Expected an identifier such as metrics.loss, got %s", p.src, id.describe())
	}
	c, err := p.ident(id.text)
	if err != nil {
		return Clause{}, err
	}
	op := p.next()
	switch {
	case op.kind == tkOp:
		c.Op = op.text
	case op.kind == tkWord && strings.EqualFold(op.text, "NOT"):
		if in := p.next(); in.kind != tkWord || !strings.EqualFold(in.text, "IN") {
			return Clause{}, invalidf("Invalid comparator 'NOT %s' in filter string '%s'", in.text, p.src)
		}
		c.Op = "NOT IN"
	case op.kind == tkWord:
		c.Op = strings.ToUpper(op.text)
	default:
		return Clause{}, invalidf("Invalid clause(s) in filter string: '%s'. Expected a comparator after %s, got %s", p.src, id.text, op.describe())
	}
	if err := checkOp(c); err != nil {
		return Clause{}, err
	}
	return c, p.value(&c)
}

// identifier splits entity.key; the key may be quoted with backticks or double quotes.
func identifier(s string) (Clause, error) {
	ent, key, ok := strings.Cut(s, ".")
	if !ok {
		return Clause{}, invalidf("Invalid identifier '%s'. Columns should be specified as 'attribute.<key>', 'metric.<key>', 'tag.<key>', 'dataset.<key>', or 'param.'.", s)
	}
	e, ok := entityNames[strings.ToLower(ent)]
	if !ok {
		return Clause{}, invalidf("Invalid entity type '%s'. Valid values are ['metric', 'parameter', 'tag', 'attribute', 'dataset']", ent)
	}
	key = unquoteKey(key)
	if key == "" {
		return Clause{}, invalidf("Invalid identifier '%s': the key is empty", s)
	}
	switch e {
	case Attribute:
		if key == "run_name" || key == "status" || key == "run_id" {
			break
		}
		if !contains(stringAttributes, key) && !contains(numericAttributes, key) {
			return Clause{}, invalidf("Invalid attribute key '%s' specified. Valid keys are '%s'", key, append(append([]string{}, stringAttributes...), numericAttributes...))
		}
	case Dataset:
		if !contains(datasetAttributes, key) {
			return Clause{}, invalidf("Invalid dataset key '%s' specified. Valid keys are '%s'", key, datasetAttributes)
		}
	}
	return Clause{Entity: e, Key: key}, nil
}

func unquoteKey(k string) string {
	if len(k) >= 2 && (k[0] == '`' && k[len(k)-1] == '`' || k[0] == '"' && k[len(k)-1] == '"') {
		return k[1 : len(k)-1]
	}
	return k
}

// Numeric reports whether a clause compares numbers (a metric, a time attribute).
func (c Clause) Numeric() bool {
	return c.Entity == Metric || c.Entity == Attribute && contains(numericKeys, c.Key)
}

var (
	numericOps = []string{"=", "!=", ">", ">=", "<", "<="}
	stringOps  = []string{"=", "!=", "LIKE", "ILIKE"}
	listOps    = []string{"IN", "NOT IN"}
)

func checkOp(c Clause) error {
	allowed := stringOps
	switch {
	case c.Numeric():
		allowed = numericOps
	case c.Entity == Attribute || c.Entity == Dataset:
		allowed = append(append([]string{}, stringOps...), listOps...)
	}
	if !contains(allowed, c.Op) {
		return invalidf("Invalid comparator '%s' not one of '%s'", c.Op, allowed)
	}
	return nil
}

func (p *parser) value(c *Clause) error {
	v := p.next()
	switch {
	case c.Op == "IN" || c.Op == "NOT IN":
		if v.kind != tkList {
			return invalidf("While parsing a list in the query, expected a non-empty list of string values, but got %s", v.describe())
		}
		c.List = v.list
	case c.Numeric():
		n, err := numericValue(*c, v)
		if err != nil {
			return err
		}
		c.Num = n
	default:
		if v.kind != tkString {
			return invalidf("Expected a quoted string value for %s (e.g. 'my-value'). Got value %s", entityLabel(c.Entity), v.text)
		}
		c.Str = v.text
	}
	return nil
}

func numericValue(c Clause, v token) (float64, error) {
	if v.kind != tkNumber {
		if c.Entity == Metric {
			return 0, invalidf("Expected numeric value type for metric. Found %s", v.text)
		}
		return 0, invalidf("Expected numeric value type for attribute %s. Found %s", c.Key, v.text)
	}
	n, err := strconv.ParseFloat(v.text, 64)
	if err != nil {
		return 0, invalidf("Expected numeric value type for %s. Found %s", entityLabel(c.Entity), v.text)
	}
	return n, nil
}

func entityLabel(e Entity) string {
	if e == Attribute {
		return "attributes"
	}
	return string(e)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// MaxFilterClauses bounds a filter: each clause is a subquery.
const MaxFilterClauses = 50

// Error is a request the tracking model refuses (MLflow's INVALID_PARAMETER_VALUE).
type Error struct{ Message string }

func (e *Error) Error() string { return e.Message }

func invalidf(format string, args ...any) error {
	return &Error{Message: fmt.Sprintf(format, args...)}
}
