package sweep

// gridParams is point i of the grid: the product of the choices' values, parameters in name
// order with the last name varying fastest (like Python's itertools.product), each choice's
// values in the order the spec lists them.
func (s Space) gridParams(names []string, i int) Params {
	p := make(Params, len(names))
	for d := len(names) - 1; d >= 0; d-- {
		vs := s[names[d]].Values
		p[names[d]] = vs[i%len(vs)]
		i /= len(vs)
	}
	return p
}
