package tracking

import "strings"

// Search filters and orders of experiments (search_experiments): the attributes name,
// creation_time and last_update_time (a bare name is an attribute) and tags.<key>.

var experimentAttributes = []string{"name", "creation_time", "last_update_time"}

// ParseExperimentFilter parses a search_experiments filter, e.g. "name LIKE 'vision-%' AND
// tags.team = 'a'".
func ParseExperimentFilter(s string) (Filter, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	return parse(s, toks, experimentIdentifier)
}

func experimentIdentifier(s string) (Clause, error) {
	if !strings.Contains(s, ".") {
		s = "attribute." + s
	}
	ent, key, _ := strings.Cut(s, ".")
	e, ok := entityNames[strings.ToLower(ent)]
	if !ok || (e != Attribute && e != Tag) {
		return Clause{}, invalidf("Invalid entity type '%s'. Valid values are ['attribute', 'tag']", ent)
	}
	key = unquoteKey(key)
	if e == Attribute && !contains(experimentAttributes, key) {
		return Clause{}, invalidf("Invalid attribute key '%s' specified. Valid keys are '%s'", key, experimentAttributes)
	}
	if key == "" {
		return Clause{}, invalidf("Invalid identifier '%s': the key is empty", s)
	}
	return Clause{Entity: e, Key: key}, nil
}

func experimentColumn(key string) string {
	switch key {
	case "name":
		return "experiments.name"
	case "creation_time":
		return "(experiments.created_at / 1000000)"
	}
	return "(experiments.updated_at / 1000000)"
}

// ExperimentSQL compiles an experiment filter to a condition on the table experiments.
func (f Filter) ExperimentSQL() (string, []any) {
	parts := []string{"1 = 1"}
	var args []any
	for _, c := range f {
		switch {
		case c.Entity == Tag:
			cond, a := compare("value", c)
			parts = append(parts, "experiments.id IN (SELECT experiment_id FROM experiment_tags WHERE key = ? AND "+cond+")")
			args = append(append(args, c.Key), a...)
		case c.Numeric():
			parts = append(parts, experimentColumn(c.Key)+" "+c.Op+" ?")
			args = append(args, c.Num)
		default:
			cond, a := compare(experimentColumn(c.Key), c)
			parts = append(parts, cond)
			args = append(args, a...)
		}
	}
	return strings.Join(parts, " AND "), args
}

// ParseExperimentOrder compiles search_experiments' order_by to an ORDER BY list over
// attributes; MLflow's default is the newest first, ties by id.
func ParseExperimentOrder(terms []string) (string, error) {
	if len(terms) > MaxOrderBy {
		return "", invalidf("order_by may hold at most %d terms, got %d", MaxOrderBy, len(terms))
	}
	var by []string
	for _, t := range terms {
		fields := strings.Fields(t)
		if len(fields) == 0 || len(fields) > 2 {
			return "", invalidf("Invalid order_by clause '%s'. Could not be parsed.", t)
		}
		c, err := experimentIdentifier(fields[0])
		if err != nil {
			return "", err
		}
		if c.Entity != Attribute {
			return "", invalidf("Invalid order_by entity: %s. Experiments are ordered by attributes only", fields[0])
		}
		dir := " ASC"
		if len(fields) == 2 {
			switch strings.ToUpper(fields[1]) {
			case "DESC":
				dir = " DESC"
			case "ASC":
			default:
				return "", invalidf("Invalid ordering key in order_by clause '%s'.", t)
			}
		}
		by = append(by, experimentColumn(c.Key)+dir)
	}
	if len(by) == 0 {
		by = append(by, "experiments.created_at DESC")
	}
	return strings.Join(append(by, "experiments.id ASC"), ", "), nil
}
