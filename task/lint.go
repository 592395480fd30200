package task

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/internal/suggest"
)

// isTaskApp reports whether a task's app (or one of its apps) names an
// app of the suite or a command service of it: an application the suite
// serves, such as the enterprise suite's Tryton, is driven in the browser
// and declared as a service, and reports group a task's episodes by it.
func (s *Suite) isTaskApp(name string) bool {
	if _, ok := s.App(name); ok {
		return true
	}
	sv, ok := s.Service(name)
	return ok && sv.IsCommand()
}

// unknownTaskApp says that a task's app is neither an app nor a command
// service of the suite.
func (s *Suite) unknownTaskApp(name string) string {
	var services []string
	for _, sv := range s.Services {
		if sv.IsCommand() {
			services = append(services, sv.Name)
		}
	}
	if len(services) == 0 {
		return s.unknownApp(name)
	}
	return fmt.Sprintf("%s, nor a command service (%s)", s.unknownApp(name), strings.Join(services, ", "))
}

// lint runs the semantic checks that the schema cannot express.
func (s *Suite) lint(f *fileCtx, t *Task) Problems {
	var ps Problems
	add := func(path []any, format string, args ...any) {
		ps = append(ps, f.problem(path, format, args...))
	}
	// warn adds a warning: the caller keeps it apart from the problems.
	warn := func(path []any, format string, args ...any) {
		p := f.problem(path, format, args...)
		p.Warning = true
		ps = append(ps, p)
	}
	notFetched := func(path []any, asset string) {
		for _, o := range t.Origin.Fetch {
			if o.Asset == asset {
				warn(path, "%q is not fetched yet: proctor import --fetch downloads it from %s", asset, o.URL)
			}
		}
	}
	if t.App != "" && !s.isTaskApp(t.App) {
		add([]any{"app"}, "%s", s.unknownTaskApp(t.App))
	}
	for i, a := range t.Apps {
		if !s.isTaskApp(a) {
			add([]any{"apps", i}, "%s", s.unknownTaskApp(a))
		}
	}
	if t.Persona != "" && len(s.Personas) > 0 && !slices.Contains(s.Personas, t.Persona) {
		add([]any{"persona"}, "unknown persona %q: %s declares %s%s", t.Persona, SuiteFile, strings.Join(s.Personas, ", "),
			suggest.DidYouMean(t.Persona, s.Personas))
	}
	for _, name := range t.ServiceNames() {
		if _, ok := s.Service(name); !ok {
			p := f.problem(nil, "{{services.%s}} names a service %s does not declare (services: %s)", name, SuiteFile, s.serviceNames())
			p.Line, p.Col = f.locateText("services." + name)
			ps = append(ps, p)
		}
	}
	partial := slices.ContainsFunc(t.Checks, func(c check.Spec) bool { return c.Kind == check.JudgeKind && len(c.Criteria) > 0 })
	for i, w := range t.Wrong {
		if w.Milestone != nil && len(t.Milestones) == 0 && !partial {
			add([]any{"wrong", i, "milestone"}, "the task has no milestones (nor a judge check with criteria) for a milestone score")
		}
	}
	if serviceRE.MatchString(t.ID) {
		add([]any{"id"}, "an id cannot name a service: its origin is known only when a run starts")
	}
	ps = append(ps, lintChanges(f, t)...)
	size, err := t.Environment.Size()
	if err != nil {
		add([]any{"environment", "resolution"}, "%v", err)
	}
	for i, o := range t.Environment.Allow {
		if p := OriginProblem(o); p != "" {
			add([]any{"environment", "allow", i}, "%q: %s", o, p)
		}
	}
	if typ := t.Environment.TypeOrDefault(); typ != "browser" && (t.Environment.Network != "" || len(t.Environment.Allow) > 0) {
		add([]any{"environment"}, "network and allow rule the pages of a browser (type: browser); the %s environment keeps its own network", typ)
	}
	if typ := t.Environment.TypeOrDefault(); typ != "x11" && t.Environment.Session != "" {
		add([]any{"environment", "session"}, "a session is an x11 desktop's; the %s environment has its own", typ)
	}
	lintSteps := func(section string, steps []Step) {
		for i, st := range steps {
			spec := st.Spec()
			if spec == nil {
				add([]any{section, i}, "a step needs exactly one kind")
				continue
			}
			if st.Copy != nil && !s.HasAsset(st.Copy.Asset) && t.Origin.Fetches(st.Copy.Asset) {
				notFetched([]any{section, i, "copy", "asset"}, st.Copy.Asset)
				if err := envPath("to", st.Copy.To); err != nil {
					add([]any{section, i, "copy", "to"}, "%s", strings.TrimPrefix(err.Error(), "to: "))
				}
				continue
			}
			if err := spec.Validate(s); err == nil {
				if field, dest := writes(st); field != "" {
					if why := outsideHome(t.Environment.TypeOrDefault(), dest); why != "" {
						add([]any{section, i, spec.Kind(), field}, "%q %s", dest, why)
					}
				}
			} else {
				field, msg, ok := strings.Cut(err.Error(), ": ")
				if ok && field == spec.Kind() {
					add([]any{section, i, spec.Kind()}, "%s", msg)
				} else if ok {
					add([]any{section, i, spec.Kind(), field}, "%s", msg)
				} else {
					add([]any{section, i, spec.Kind()}, "%v", err)
				}
			}
		}
	}
	lintSteps("setup", t.Setup)
	lintSteps("after", t.After)
	if _, err := check.CompileAll(t.Checks, t.Milestones); err != nil {
		var pe *check.PathError
		if errors.As(err, &pe) {
			add(pe.Path, "%s", pe.Reason)
		} else {
			add([]any{"checks"}, "%v", err)
		}
	}
	assetCheck := func(prefix []any, specs []check.Spec) {
		check.Each(prefix, specs, func(path []any, sp check.Spec) {
			if sp.Asset != "" && !s.HasAsset(sp.Asset) && t.Origin.Fetches(sp.Asset) {
				notFetched(append(path, "asset"), sp.Asset)
			} else if sp.Asset != "" && !s.HasAsset(sp.Asset) {
				add(append(path, "asset"), "%q is not in the suite's %s/", sp.Asset, AssetDir)
			}
		})
	}
	assetCheck([]any{"checks"}, t.Checks)
	if typ := t.Environment.TypeOrDefault(); TypeCapabilities[typ] != nil {
		for _, n := range t.Missing(TypeCapabilities[typ]) {
			add(n.Path, "%s needs %s, which %s environment does not offer", n.Label, n.Cap, english.A(typ))
		}
	}
	for i, m := range t.Milestones {
		assetCheck([]any{"milestones", i, "checks"}, m.Checks)
	}
	has := func(k check.Kind) int {
		for i, c := range t.Checks {
			if c.Kind == k {
				return i
			}
		}
		return -1
	}
	switch t.Kind {
	case InfeasibleTask:
		if has(check.Infeasible) < 0 {
			add([]any{"checks"}, "an infeasible task needs an infeasible check")
		}
	case QATask:
		if has(check.AnswerKind) < 0 {
			add([]any{"checks"}, "a qa task needs an answer check")
		}
	case ProcessTask:
		judgesSteps := slices.ContainsFunc(t.Checks, func(c check.Spec) bool {
			return c.Kind == check.JudgeKind && (c.Evidence == check.ExpectedFlow || c.Evidence == check.ProcessInfo)
		})
		if has(check.Process) < 0 && !judgesSteps {
			add([]any{"checks"}, "a process task needs a process check on the trajectory (or a judge check of its expected_flow or process)")
		}
	}
	if i := has(check.Infeasible); i >= 0 && t.Kind != InfeasibleTask {
		add([]any{"checks", i, "kind"}, "an infeasible check belongs to a task of kind infeasible, not %s", t.Kind)
	}
	ps = append(ps, lintGold(f, t, size)...)
	names := map[string]bool{}
	for i, w := range t.Wrong {
		if names[w.Name] {
			add([]any{"wrong", i, "name"}, "%q is used twice", w.Name)
		}
		names[w.Name] = true
		for j, a := range w.Actions {
			if !a.Kind.Known() {
				add([]any{"wrong", i, "actions", j, "kind"}, "unknown action %q", a.Kind)
			} else if err := a.Validate(); err != nil {
				add([]any{"wrong", i, "actions", j}, "%v", err)
			}
		}
	}
	return ps
}

func lintGold(f *fileCtx, t *Task, size action.Size) Problems {
	var ps Problems
	add := func(path []any, format string, args ...any) {
		ps = append(ps, f.problem(path, format, args...))
	}
	if len(t.Gold) == 0 {
		if t.Unproven == "" {
			add([]any{"gold"}, "every task needs a gold solution: it proves the checks pass (an imported task without one says why in unproven)")
		}
		return ps
	}
	for i, a := range t.Gold {
		if !a.Kind.Known() {
			add([]any{"gold", i, "kind"}, "unknown action %q (known: %s)", a.Kind, kindList())
			continue
		}
		if err := a.Validate(); err != nil {
			add([]any{"gold", i}, "%v", err)
			continue
		}
		if a.Kind == action.Code && t.Interface == "gui" {
			add([]any{"gold", i, "kind"}, "a GUI-only task (interface: gui) refuses commands; its gold solution cannot use one")
		}
		if a.Target != nil && a.Target.Tag > 0 {
			add([]any{"gold", i, "target", "tag"}, "set-of-mark tags change with every screenshot; target the element by role and name")
		}
		for _, p := range []struct {
			name string
			pt   *action.Point
		}{{"point", a.Point}, {"to", a.To}} {
			if p.pt == nil || size.W == 0 || a.Kind == action.MoveRel || a.Kind == action.DragRel {
				continue
			}
			if _, _, err := p.pt.Pixels(size); err != nil {
				add([]any{"gold", i, p.name}, "%v", err)
			}
		}
	}
	last := t.Gold[len(t.Gold)-1]
	switch {
	case !last.Kind.Terminal():
		add([]any{"gold", len(t.Gold) - 1}, "the gold solution must end with done, fail or answer, not %s", last.Kind)
	case t.Kind == InfeasibleTask && last.Kind != action.Fail:
		add([]any{"gold", len(t.Gold) - 1}, "the gold solution of an infeasible task ends with fail")
	case t.Kind != InfeasibleTask && last.Kind == action.Fail:
		add([]any{"gold", len(t.Gold) - 1}, "only an infeasible task's gold solution ends with fail")
	case t.Kind == QATask && last.Kind != action.Answer:
		add([]any{"gold", len(t.Gold) - 1}, "the gold solution of a qa task ends with an answer")
	}
	if len(t.Gold) > t.MaxSteps() {
		add([]any{"gold"}, "the gold solution has %d actions, more than the %d steps allowed", len(t.Gold), t.MaxSteps())
	}
	return ps
}

func kindList() string {
	parts := make([]string, len(action.Kinds))
	for i, k := range action.Kinds {
		parts[i] = string(k)
	}
	return strings.Join(parts, ", ")
}

// homeTypes are the environment types whose files a task writes under the
// home folder only (~/...): the X11 desktop, a VNC desktop's guest and the
// browser's folder refuse any other path at run time.
var homeTypes = map[string]bool{"x11": true, "vnc": true, "browser": true}

// writes is the field and the path a write or copy step writes.
func writes(st Step) (field, dest string) {
	switch {
	case st.Write != nil:
		return "path", st.Write.Path
	case st.Copy != nil:
		return "to", st.Copy.To
	}
	return "", ""
}

// outsideHome says why an environment of type typ would refuse a setup
// step writing dest, or "" when it would not.
func outsideHome(typ, dest string) string {
	if !homeTypes[typ] || dest == "" {
		return ""
	}
	if dest != "~" && !strings.HasPrefix(dest, "~/") {
		return fmt.Sprintf("is outside the home folder, the only one %s environment lets a setup step write: give a path under ~/", english.A(typ))
	}
	return "" // ".." is refused by the step's own validation
}
