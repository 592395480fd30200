package task

// Parse loads one task or template from its source, as if it were a file
// called name in a suite with no assets and only the built-in apps.
func Parse(name string, src []byte) ([]*Task, Problems) {
	s := &Suite{assets: map[string]bool{}}
	ls, ps := s.parse(name, src)
	out := make([]*Task, len(ls))
	for i, l := range ls {
		out[i] = l.Task
	}
	return out, ps
}
