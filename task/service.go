package task

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
)

// Service is a server that a suite's tasks need, declared under services
// in suite.yaml. A task names it in any string as {{services.NAME}},
// which becomes the server's origin (http://127.0.0.1:PORT) for the
// episode.
//
// A static service (Static) is Proctor's own file server over a folder of
// the suite, started once for the run. A command service (Command) is an
// application of the suite's own, started on each place of the pool from
// a fresh copy of its pristine data folder, and, unless Reset is "run",
// started again from a fresh copy before every episode, so that nothing
// one episode wrote is seen by the next.
type Service struct {
	Name string `json:"name"`
	// Static is a folder of the suite that Proctor's own static file
	// server serves.
	Static string `json:"static,omitempty"`
	// Command starts the server in the foreground: its arguments, with
	// {{port}} (a free loopback port), {{data}} (the instance's copy of
	// Data) and {{suite}} (the suite's folder) filled. Stopping it kills
	// its process group.
	Command []string `json:"command,omitempty"`
	// Data is the pristine data folder each instance copies: absolute,
	// a folder of the suite as {{suite}}/PATH, or relative to the suite's
	// data folder (DataDir), which the suite's set-up fills.
	Data string `json:"data,omitempty"`
	// Ready is the path of the server that answers once it serves
	// requests; the runner polls it with GET until it answers with a
	// status under 500. "/" when empty.
	Ready string `json:"ready,omitempty"`
	// StartTimeout bounds starting the server until it is ready.
	StartTimeout duration.Duration `json:"start_timeout,omitempty"`
	// Reset is when the data is restored: "episode" (before every
	// episode, the default) or "run" (one instance for the whole run).
	Reset string `json:"reset,omitempty"`

	declared string // where Data is written: "FILE:LINE:COL: services[I].data"
}

// DataDeclared is where the service's data folder is named in suite.yaml,
// "/path/suite.yaml:LINE:COL: services[I].data", for a message about the
// folder; "" for a service not loaded from a file, or without data.
func (sv Service) DataDeclared() string { return sv.declared }

// IsCommand reports whether the service is a command service.
func (sv Service) IsCommand() bool { return len(sv.Command) > 0 }

// commandProblem says what is wrong with a command service's fields, or "".
func (sv Service) commandProblem() string {
	if !strings.Contains(strings.Join(sv.Command, " "), "{{port}}") {
		return "the command must take the port it listens on as {{port}}"
	}
	for _, a := range sv.Command {
		for _, m := range placeholderRE.FindAllStringSubmatch(a, -1) {
			if m[1] != "port" && m[1] != "data" && m[1] != "suite" {
				return fmt.Sprintf("unknown placeholder {{%s}} in the command (known: {{port}}, {{data}}, {{suite}})", m[1])
			}
		}
	}
	if strings.Contains(strings.Join(sv.Command, " "), "{{data}}") && sv.Data == "" {
		return "the command names {{data}} but the service has no data folder"
	}
	return ""
}

// The service resets.
const (
	ResetEpisode = "episode"
	ResetRun     = "run"
)

// DefaultStartTimeout bounds a command service's start when the suite
// gives none.
const DefaultStartTimeout = duration.Duration(120 * time.Second)

// DataRoot is the folder under which suites keep the data their set-up
// prepares: $PROCTOR_DATA, else /var/lib/proctor.
func DataRoot() string {
	if d := os.Getenv("PROCTOR_DATA"); d != "" {
		return d
	}
	return "/var/lib/proctor"
}

// DataDir is the suite's data folder: DataRoot/NAME.
func (s *Suite) DataDir() string { return filepath.Join(DataRoot(), s.Name) }

// suiteData is the prefix of a data folder shipped with the suite.
const suiteData = "{{suite}}/"

// DataPath is where the service's pristine data lies.
func (s *Suite) DataPath(sv Service) string {
	switch {
	case sv.Data == "" || filepath.IsAbs(sv.Data):
		return sv.Data
	case strings.HasPrefix(sv.Data, suiteData):
		return filepath.Join(s.Dir, strings.TrimPrefix(sv.Data, suiteData))
	}
	return filepath.Join(s.DataDir(), sv.Data)
}

// Setup is how a suite's applications are installed and prepared, run by
// `proctor setup SUITE`: the Debian packages first, then the script (a
// file of the suite run with bash, with PROCTOR_SUITE_DATA naming the
// suite's data folder).
type Setup struct {
	Packages []string `json:"packages,omitempty"`
	Script   string   `json:"script,omitempty"`
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

// UsedServices lists the services the task needs, sorted: those its
// strings name as {{services.NAME}} and those its checks' sql and http
// probes read.
func (t *Task) UsedServices() []string {
	seen := map[string]bool{}
	for _, n := range t.ServiceNames() {
		seen[n] = true
	}
	specs := slices.Clone(t.Checks)
	for _, m := range t.Milestones {
		specs = append(specs, m.Checks...)
	}
	check.Each(nil, specs, func(_ []any, s check.Spec) {
		if s.Probe == nil {
			return
		}
		if q, ok := s.Probe.Service(); ok && q.Name() != "" {
			seen[q.Name()] = true
		}
	})
	return slices.Sorted(maps.Keys(seen))
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
