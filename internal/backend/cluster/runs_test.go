package cluster

// testRuns is the run core for the dispatcher's tests: tokens "tok-<run>", kicks to kick.
type testRuns struct{ kick func() }

func (testRuns) RunToken(id string) string { return "tok-" + id }

func (r testRuns) Kick() {
	if r.kick != nil {
		r.kick()
	}
}
