package run

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/task"
)

// preflight starts the places that serve some job, at the size of the
// first, and refuses the run, naming tasks and checks, when a task has no
// place of its type and size or needs a capability its places lack.
func preflight(ctx context.Context, cfg Config, jobs []job) ([]*place, error) {
	var places []*place
	for _, src := range sources(cfg) {
		places = append(places, &place{src: src, startTimeout: cfg.ResetTimeout})
	}
	var problems []Problem
	var unjudged []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if seen[j.t.ID] {
			continue
		}
		seen[j.t.ID] = true
		if cfg.Judge == nil && judged(j.t) {
			unjudged = append(unjudged, j.t.ID)
		}
		n, far := 0, []string{}
		for _, p := range places {
			if p.serves(j) {
				n++
			} else if p.fits(j) {
				far = append(far, p.src.Name)
			}
		}
		switch {
		case n == 0 && len(far) > 0:
			problems = append(problems, Problem{fmt.Sprintf("task %s uses the service(s) %s, which Proctor starts on this machine's loopback; %s runs on another machine and cannot reach them", j.t.ID, strings.Join(j.local, ", "), strings.Join(far, ", ")), ErrLocalService})
		case n == 0:
			problems = append(problems, Problem{Text: fmt.Sprintf("task %s needs %s environment of %dx%d; the pool has %s", j.t.ID, english.A(string(j.typ())), j.size().W, j.size().H, describePool(places))})
		}
	}
	if len(unjudged) > 0 {
		names := strings.Join(unjudged, ", ")
		if len(unjudged) > 5 {
			names = strings.Join(unjudged[:5], ", ") + fmt.Sprintf(" and %d more", len(unjudged)-5)
		}
		have := "have"
		if len(unjudged) == 1 {
			have = "has"
		}
		problems = append(problems, Problem{fmt.Sprintf("%s %s judge checks (%s), and no judge model is configured", english.Count(len(unjudged), "task"), have, names), ErrNoJudge})
	}
	if cfg.Suite != nil {
		for _, sv := range cfg.Suite.Services {
			if d := cfg.Suite.DataPath(sv); sv.IsCommand() && d != "" {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					at := ""
					if w := sv.DataDeclared(); w != "" {
						at = " (" + w + ")"
					}
					problems = append(problems, Problem{Text: fmt.Sprintf("service %s: its data folder %s%s is missing: run `proctor setup %s` first", sv.Name, d, at, cfg.Suite.Name)})
				}
			}
		}
	}
	if len(problems) > 0 {
		return nil, preflightError(problems)
	}
	var started []*place
	for _, p := range places {
		if len(started) == len(jobs) {
			break // more places than episodes: the rest would idle
		}
		for _, j := range jobs {
			if p.serves(j) {
				if err := p.start(ctx, j.size()); err != nil {
					for _, s := range started {
						s.close()
					}
					return nil, fmt.Errorf("pre-flight: environment %s does not start: %w", p.src.Name, err)
				}
				p.svc = service.NewInstances(cfg.Suite)
				started = append(started, p)
				break
			}
		}
	}
	// An observation with the tree needs it of every place.
	if cfg.Obs != ObsScreenshot {
		for _, p := range started {
			if !p.info.Has(task.CapTree) {
				problems = append(problems, Problem{fmt.Sprintf("observation mode %s needs tree, which %s does not offer", cfg.Obs, p.src.Name), ErrNeedsTree})
			}
		}
	}
	for _, j := range jobs {
		if !seen[j.t.ID] {
			continue
		}
		delete(seen, j.t.ID)
		for _, p := range started {
			if !p.serves(j) {
				continue
			}
			for _, n := range j.t.Missing(p.info.Caps) {
				problems = append(problems, Problem{Text: fmt.Sprintf("task %s: %s needs %s, which %s does not offer", j.t.ID, n.Label, n.Cap, p.src.Name)})
			}
		}
	}
	if len(problems) > 0 {
		for _, s := range started {
			s.close()
		}
		return nil, preflightError(problems)
	}
	return started, nil
}

func describePool(places []*place) string {
	var parts []string
	for _, p := range places {
		size := "any size"
		if p.src.Size != (action.Size{}) {
			size = fmt.Sprintf("%dx%d", p.src.Size.W, p.src.Size.H)
		}
		types := strings.Join(append([]string{p.src.Type}, p.src.Also...), ", ")
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", p.src.Name, types, size))
	}
	if len(parts) == 0 {
		return "no environment"
	}
	return strings.Join(parts, ", ")
}

// judged reports whether t has judge checks.
func judged(t *task.Task) bool {
	s, err := check.CompileAll(t.Checks, t.Milestones)
	return err == nil && s.Judged()
}

func preflightError(problems []Problem) error {
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Text, b.Text) })
	return &PreflightError{Problems: problems}
}

// PreflightError is a run refused by its pre-flight, before any episode.
// It matches ErrPreflight, and the Kind of each of its problems.
type PreflightError struct {
	Problems []Problem
}

// Problem is one reason a pre-flight refused a run. Kind, when not nil,
// says what would fix it (ErrNoJudge, ErrNeedsTree, ErrLocalService), so
// that a command can say so in its own flags.
type Problem struct {
	Text string
	Kind error
}

func (e *PreflightError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Text
	}
	return "pre-flight refused the run:\n  " + strings.Join(lines, "\n  ")
}

func (e *PreflightError) Is(target error) bool {
	return target == ErrPreflight || slices.ContainsFunc(e.Problems, func(p Problem) bool { return p.Kind != nil && p.Kind == target })
}
