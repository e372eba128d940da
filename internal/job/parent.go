package job

// IsParent says the run is a parent (a sweep or a pipeline): it is never handed to a backend;
// a loop of the controller creates its child runs and ends it from theirs.
func (s *Spec) IsParent() bool { return s.Sweep != nil || s.Pipeline != nil }
