package tracking

import (
	"regexp"
	"slices"
	"strings"
)

// Search filters and orders of MLflow's model registry (search_registered_models,
// search_model_versions): a bare name is an attribute; entities attribute, tag and tags.
// Registered models filter on the attribute name; model versions on name, run_id, source_path
// (strings) and version_number (a number). The registry is searched in memory (Match), not in
// SQL: a workspace's models are few.

// PromptTag marks a registered model as one of MLflow's prompts. MLflow's client adds
// "tag.`mlflow.prompt.is_prompt` != 'true'" to every search_registered_models; a model without
// the tag matches it.
const PromptTag = "mlflow.prompt.is_prompt"

var (
	registeredModelAttributes = []string{"name"}
	modelVersionAttributes    = []string{"name", "run_id", "source_path", "version_number"}
)

// ParseRegisteredModelFilter parses a search_registered_models filter, e.g.
// "name LIKE 'iris%' AND tags.team = 'a'".
func ParseRegisteredModelFilter(s string) (Filter, error) {
	return parseRegistryFilter(s, registeredModelAttributes)
}

// ParseModelVersionFilter parses a search_model_versions filter, e.g.
// "name = 'iris' AND version_number >= 2 AND run_id IN ('a', 'b')".
func ParseModelVersionFilter(s string) (Filter, error) {
	return parseRegistryFilter(s, modelVersionAttributes)
}

func parseRegistryFilter(s string, attrs []string) (Filter, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	f, err := parse(s, toks, func(id string) (Clause, error) { return registryIdentifier(id, attrs) })
	if err != nil {
		return nil, err
	}
	for _, c := range f {
		if (c.Op == "IN" || c.Op == "NOT IN") && !(c.Entity == Attribute && c.Key == "run_id" && c.Op == "IN") {
			return nil, invalidf("Invalid comparator for attribute: %s (IN is for run_id only)", c.Op)
		}
	}
	return f, nil
}

func registryIdentifier(s string, attrs []string) (Clause, error) {
	ent, key, ok := strings.Cut(s, ".")
	if !ok {
		ent, key = "attribute", s
	}
	e, known := entityNames[strings.ToLower(ent)]
	if !known || (e != Attribute && e != Tag) || strings.EqualFold(ent, "attr") || strings.EqualFold(ent, "run") {
		return Clause{}, invalidf("Invalid entity type '%s'. Valid entity types are ('attribute', 'tag', 'tags')", ent)
	}
	key = unquoteKey(key)
	if key == "" {
		return Clause{}, invalidf("Invalid identifier '%s': the key is empty", s)
	}
	if e == Attribute && !contains(attrs, key) {
		return Clause{}, invalidf("Invalid attribute key '%s' specified. Valid keys are '%s'", key, attrs)
	}
	return Clause{Entity: e, Key: key}, nil
}

// Registered is what a registry filter reads of one registered model or model version: its
// string attributes, its version number, and its tags.
type Registered struct {
	Attrs   map[string]string
	Version float64
	Tags    map[string]string
}

// Match says whether x holds every clause. A tag clause needs the tag, but for != on PromptTag,
// which a model without the tag holds (MLflow's rule, so that its client's searches find
// models).
func (f Filter) Match(x Registered) bool {
	for _, c := range f {
		var ok bool
		switch {
		case c.Entity == Tag:
			v, has := x.Tags[c.Key]
			ok = has && matchString(v, c) || !has && c.Key == PromptTag && c.Op == "!="
		case c.Key == "version_number":
			ok = matchNumber(x.Version, c)
		default:
			ok = matchString(x.Attrs[c.Key], c)
		}
		if !ok {
			return false
		}
	}
	return true
}

func matchString(v string, c Clause) bool {
	switch c.Op {
	case "=":
		return v == c.Str
	case "!=":
		return v != c.Str
	case "LIKE":
		return likePattern(c.Str, false).MatchString(v)
	case "ILIKE":
		return likePattern(c.Str, true).MatchString(v)
	case "IN":
		return slices.Contains(c.List, v)
	}
	return false
}

func matchNumber(v float64, c Clause) bool {
	switch c.Op {
	case "=":
		return v == c.Num
	case "!=":
		return v != c.Num
	case "<":
		return v < c.Num
	case "<=":
		return v <= c.Num
	case ">":
		return v > c.Num
	case ">=":
		return v >= c.Num
	}
	return false
}

// likePattern is a LIKE pattern (% any string, _ one character) as an anchored regexp; MLflow's
// LIKE is case-sensitive, ILIKE not.
func likePattern(p string, fold bool) *regexp.Regexp {
	var b strings.Builder
	if fold {
		b.WriteString("(?is)")
	} else {
		b.WriteString("(?s)")
	}
	b.WriteString("^")
	for _, r := range p {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// ParseRegisteredModelOrder parses search_registered_models' order_by: name, timestamp or
// last_updated_timestamp (the same: the last update), ASC or DESC; ties by name ASC, which is
// also the default.
func ParseRegisteredModelOrder(terms []string) ([]OrderBy, error) {
	by, err := parseRegistryOrder(terms, map[string]string{"name": "name", "timestamp": "last_updated_timestamp",
		"last_updated_timestamp": "last_updated_timestamp"}, "'name', 'timestamp', 'last_updated_timestamp'")
	if err != nil {
		return nil, err
	}
	return withTieBreaks(by, OrderBy{Entity: Attribute, Key: "name"}), nil
}

// ParseModelVersionOrder parses search_model_versions' order_by: name, version_number,
// creation_timestamp, last_updated_timestamp. The default is MLflow's: last_updated_timestamp
// DESC, name ASC, version_number DESC; ties by name ASC, then version_number DESC.
func ParseModelVersionOrder(terms []string) ([]OrderBy, error) {
	keys := map[string]string{"name": "name", "version_number": "version_number",
		"creation_timestamp": "creation_timestamp", "last_updated_timestamp": "last_updated_timestamp"}
	by, err := parseRegistryOrder(terms, keys, "'name', 'version_number', 'creation_timestamp', 'last_updated_timestamp'")
	if err != nil {
		return nil, err
	}
	if len(by) == 0 {
		by = []OrderBy{{Entity: Attribute, Key: "last_updated_timestamp", Desc: true}}
	}
	return withTieBreaks(by, OrderBy{Entity: Attribute, Key: "name"},
		OrderBy{Entity: Attribute, Key: "version_number", Desc: true}), nil
}

func parseRegistryOrder(terms []string, keys map[string]string, valid string) ([]OrderBy, error) {
	if len(terms) > MaxOrderBy {
		return nil, invalidf("order_by may hold at most %d terms, got %d", MaxOrderBy, len(terms))
	}
	var out []OrderBy
	for _, t := range terms {
		fields := strings.Fields(t)
		if len(fields) == 0 || len(fields) > 2 {
			return nil, invalidf("Invalid order_by clause '%s'. Could not be parsed.", t)
		}
		k := unquoteKey(strings.TrimPrefix(fields[0], "attribute."))
		key, ok := keys[k]
		if !ok {
			return nil, invalidf("Invalid order by key '%s' specified. Valid keys are {%s}", k, valid)
		}
		o := OrderBy{Entity: Attribute, Key: key}
		if len(fields) == 2 {
			switch strings.ToUpper(fields[1]) {
			case "DESC":
				o.Desc = true
			case "ASC":
			default:
				return nil, invalidf("Invalid order_by clause '%s'. Could not be parsed.", t)
			}
		}
		if slices.ContainsFunc(out, func(x OrderBy) bool { return x.Key == key }) {
			return nil, invalidf("`order_by` contains duplicate fields: %v", terms)
		}
		out = append(out, o)
	}
	return out, nil
}

// withTieBreaks appends each tie-break whose key the order does not name yet.
func withTieBreaks(by []OrderBy, ties ...OrderBy) []OrderBy {
	for _, t := range ties {
		if !slices.ContainsFunc(by, func(x OrderBy) bool { return x.Key == t.Key }) {
			by = append(by, t)
		}
	}
	return by
}
