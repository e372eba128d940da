package binding

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// assign handles a value in an assignment (a=..., a[i]=..., a=(...)), in a declaration
// (declare, local, export, ...) or not.
func (c *classifier) assign(n *syntax.Assign, i int) error {
	child := c.path[i+1]
	decl, inDecl := c.path[i-1].(*syntax.DeclClause)
	where, flags := "an assignment", declFlags{}
	if inDecl {
		where, flags = decl.Variant.Value, declFlagsOf(c.info, clauseWords(decl))
	}
	switch {
	case same(child, n.Name):
		c.add(mustName, where)
	case same(child, n.Index):
		c.add(mustInteger, "an array subscript")
	case n.Naked && same(child, n.Value):
		return c.declWord(where, flags, n.Value)
	case same(child, n.Value):
		prefix, known := c.info.prefix(n.Value, c.s.start)
		return c.assignedValue(where, flags, n.Name.Value, inDecl, prefix, known)
	case same(child, n.Array):
		return c.assignedValue(where, flags, n.Name.Value, false, "", false)
	}
	return nil
}

// declWord handles a value in a declaration argument that is a word rather than a parsed
// assignment ("x=${{v}}", or any argument of `builtin declare`): bash splits it at the
// first = when it runs, so the text before the value says whether it is in the name.
func (c *classifier) declWord(where string, flags declFlags, w *syntax.Word) error {
	p, known := c.info.prefix(w, c.s.start)
	name, value, isValue := strings.Cut(p, "=")
	switch {
	case strings.HasPrefix(p, "-") || strings.HasPrefix(p, "+"):
		return fmt.Errorf("${{%s}} in an option of %s is not supported", c.s.name, where)
	case isValue:
		return c.assignedValue(where, flags, name, true, value, known)
	case known && strings.Contains(p, "["):
		c.add(mustInteger, "an array subscript")
	case !known:
		return fmt.Errorf("${{%s}} is in an argument of %s whose variable name bash computes when it runs, so Hangar cannot tell which variable it sets; name the variable in the command", c.s.name, where)
	default:
		c.add(mustName, where)
	}
	return nil
}

// assignedValue handles a value assigned to the variable name; prefix is the literal
// text before it in the assigned word, when known.
func (c *classifier) assignedValue(where string, flags declFlags, name string, inDecl bool, prefix string, known bool) error {
	name = baseName(name)
	if why := StartupVar(name); why != "" {
		return c.startup(name, why)
	}
	switch {
	case flags.nameref:
		c.add(mustName, where+" -n")
	case flags.integer:
		c.add(mustInteger, where+" -i")
	case flags.dynamic:
		c.add(mustInteger, where+" with computed options, which may include -i")
	case c.info.intReason(name) != "":
		c.add(mustInteger, c.info.intReason(name))
	}
	// declare and typeset (not export, readonly or local) also re-read the value of a
	// variable that is already an array; all of them do with -a or -A.
	rereads := where == "declare" || where == "typeset" || flags.array || flags.dynamic
	if !inDecl || !known || !rereads {
		return nil
	}
	if strings.HasPrefix(prefix, "(") {
		return fmt.Errorf("${{%s}} is in a value that %s reads as an array assignment and expands again; write %s %s=( ... ) without quotes instead",
			c.s.name, where, where, name)
	}
	if prefix == "" {
		c.add(mustNotParen, where)
	}
	return nil
}
