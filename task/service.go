package task

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Service is a server that a suite's tasks need, declared under services
// in suite.yaml. The runner starts each one before the first episode and
// stops it after the last; a task names it in any string as
// {{services.NAME}}, which becomes the server's origin
// (http://127.0.0.1:PORT) when the run starts.
type Service struct {
	Name string `json:"name"`
	// Static is a folder of the suite that Proctor's own static file
	// server serves.
	Static string `json:"static,omitempty"`
}

// serviceRE matches a service placeholder; the template's own
// placeholders have no dot, so instances keep it for the run to fill.
var serviceRE = regexp.MustCompile(`\{\{\s*services\.([A-Za-z0-9_-]+)\s*\}\}`)

// ServiceNames lists the services a task's strings name, sorted.
func (t *Task) ServiceNames() []string {
	b, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range serviceRE.FindAllSubmatch(b, -1) {
		seen[string(m[1])] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Service looks up the suite's service of the name.
func (s *Suite) Service(name string) (Service, bool) {
	for _, sv := range s.Services {
		if sv.Name == name {
			return sv, true
		}
	}
	return Service{}, false
}

// WithServices returns the task with every {{services.NAME}} filled with
// origins[NAME]; the task itself is returned where it names none. It fails
// on a service that origins lacks.
func (t *Task) WithServices(origins map[string]string) (*Task, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	if !serviceRE.Match(b) {
		return t, nil
	}
	var missing []string
	b = serviceRE.ReplaceAllFunc(b, func(m []byte) []byte {
		name := string(serviceRE.FindSubmatch(m)[1])
		o, ok := origins[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		// The origin goes into a JSON string: quote it as one.
		q, _ := json.Marshal(o)
		return q[1 : len(q)-1]
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("task %s names the service %s, which is not running (services: %s)", t.ID, missing[0], strings.Join(keys(origins), ", "))
	}
	var c Task
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("task %s with its services filled: %w", t.ID, err)
	}
	c.File, c.Template, c.Values = t.File, t.Template, t.Values
	return &c, nil
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func (s *Suite) serviceNames() string {
	var out []string
	for _, sv := range s.Services {
		out = append(out, sv.Name)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
