package task

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-eval/proctor/check"
)

// sqlProbe is an sql probe of a task's checks with its path in the task
// file.
type sqlProbe struct {
	path          []any // of the probe's sql
	service, file string
}

// sqlProbes lists the sql probes of the task's checks and of its
// milestones' checks.
func (t *Task) sqlProbes() []sqlProbe {
	var out []sqlProbe
	add := func(prefix []any, specs []check.Spec) {
		check.Each(prefix, specs, func(path []any, sp check.Spec) {
			if sp.Probe != nil && sp.Probe.SQL != nil {
				p := append(path, "probe", "sql")
				out = append(out, sqlProbe{path: p, service: sp.Probe.SQL.Service, file: sp.Probe.SQL.DB})
			}
		})
	}
	add([]any{"checks"}, t.Checks)
	for i, m := range t.Milestones {
		add([]any{"milestones", i, "checks"}, m.Checks)
	}
	return out
}

// sqlProblems checks the database files that the task's sql probes read,
// where lint can know them. An sql probe reads a file of its service's
// data folder, copied from the service's pristine data before the
// episode:
//
//   - a service the suite does not declare, or a static one (which has no
//     data folder), leaves the probe nothing to read: an error;
//   - pristine data shipped in the suite's own folder ({{suite}}/PATH) is
//     known here: a database file that is not there is an error naming
//     the path;
//   - pristine data that the suite's set-up writes (a folder under the
//     suite's data folder, or an absolute one) exists only on a machine
//     where proctor setup ran: a file missing from a folder that exists
//     is a warning, and nothing is said where the folder is absent (this
//     machine was not set up, which says nothing of the task);
//   - a command service without a data folder starts from an empty one,
//     which the server itself may fill: nothing is known.
//
// A file probe read as sqlite (file: PATH, read: sqlite) reads a path on
// the environment, which the application or the device writes while the
// episode runs (an Android app's database, a document the agent saves):
// lint cannot know it, and says nothing of it.
func (s *Suite) sqlProblems(f *fileCtx, t *Task) (errs, warns Problems) {
	for _, p := range t.sqlProbes() {
		sv, ok := s.Service(p.service)
		switch {
		case !ok:
			errs = append(errs, f.problem(append(p.path, "service"), "the sql probe names the service %q, which %s does not declare (services: %s)",
				p.service, SuiteFile, s.serviceNames()))
			continue
		case !sv.IsCommand():
			errs = append(errs, f.problem(append(p.path, "service"), "the sql probe reads a database of a command service's data folder; %s is a static service", p.service))
			continue
		case sv.Data == "":
			continue
		}
		dir := s.DataPath(sv)
		file := filepath.Join(dir, p.file)
		fi, err := os.Stat(file)
		if err == nil && !fi.IsDir() {
			continue
		}
		what := "does not exist"
		if err == nil {
			what = "is a folder"
		}
		if strings.HasPrefix(sv.Data, suiteData) {
			errs = append(errs, f.problem(append(p.path, "db"), "the database %q is not in the data of the service %s, which ships with the suite: %s %s",
				p.file, p.service, file, what))
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // set up elsewhere: lint cannot know
		}
		w := f.problem(append(p.path, "db"), "the database %q is not in the data of the service %s as proctor setup left it here: %s %s",
			p.file, p.service, file, what)
		w.Warning = true
		warns = append(warns, w)
	}
	return errs, warns
}
