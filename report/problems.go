package report

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/store"
)

// Problem is a reason that episodes of a run share: why an episode was an
// infrastructure error, or why the agent's reply could not be used or its
// action was refused.
type Problem struct {
	Kind     string `json:"kind"` // "error", "reply" or "refused"
	Reason   string `json:"reason"`
	Count    int    `json:"count"`    // times it happened
	Episodes int    `json:"episodes"` // episodes it happened in
	First    string `json:"first"`    // the first episode, task#repeat
}

// AgentTotals counts what an agent did wrong over a run: replies that
// could not be used and actions refused, and the episodes with any.
type AgentTotals struct {
	Unparsed int `json:"unparsed"`
	Refused  int `json:"refused"`
	Episodes int `json:"episodes"`
}

// maxProblems bounds the reasons a report lists per run.
const maxProblems = 8

// stepPrefix is the step number a reason starts with, left out so that
// the same reason at different steps counts once.
var stepPrefix = regexp.MustCompile(`^step \d+: `)

// problems groups the run's errors and the agent's first reasons (the
// episodes keep a few each), most frequent first.
func problems(rs []store.Result) ([]Problem, AgentTotals) {
	type key struct{ kind, reason string }
	byKey := map[key]*Problem{}
	var order []key
	var tot AgentTotals
	add := func(kind, reason, ep string, seen map[key]bool) {
		reason = strings.Join(strings.Fields(stepPrefix.ReplaceAllString(reason, "")), " ")
		if reason == "" {
			reason = "(no reason given)"
		}
		k := key{kind, reason}
		p := byKey[k]
		if p == nil {
			p = &Problem{Kind: kind, Reason: reason, First: ep}
			byKey[k] = p
			order = append(order, k)
		}
		p.Count++
		if !seen[k] {
			seen[k] = true
			p.Episodes++
		}
	}
	for _, r := range rs {
		ep := fmt.Sprintf("%s#%d", r.Task, r.Repeat)
		seen := map[key]bool{}
		if r.Outcome == "error" {
			add("error", r.Reason, ep, seen)
		}
		tot.Unparsed += r.Unparsed
		tot.Refused += r.Refused
		if r.Unparsed+r.Refused > 0 {
			tot.Episodes++
		}
		for _, p := range r.Problems {
			kind, reason := "refused", p
			if _, rest, ok := strings.Cut(p, "reply not usable: "); ok {
				kind, reason = "reply", rest
			} else if _, rest, ok := strings.Cut(p, "refused: "); ok {
				reason = rest
			}
			add(kind, reason, ep, seen)
		}
	}
	out := make([]Problem, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b Problem) int { return cmp.Compare(b.Count, a.Count) })
	return out, tot
}

// kindNames say what each kind of problem is, in a report.
var kindNames = map[string]string{"error": "infrastructure error", "reply": "reply not usable", "refused": "action refused"}

// writeProblems lists, per run, the reasons of its errors and of its
// agent's unusable replies and refused actions, so that a report explains
// a bad agent or a broken service.
func writeProblems(w io.Writer, rs []*Report, md bool, table func(string, []string, [][]string)) {
	for _, r := range rs {
		if len(r.Problems) == 0 {
			continue
		}
		var rows [][]string
		for _, p := range r.Problems[:min(len(r.Problems), maxProblems)] {
			reason := p.Reason
			if len(reason) > 160 {
				reason = strings.ToValidUTF8(reason[:160], "") + "…"
			}
			if md {
				reason = strings.ReplaceAll(reason, "|", `\|`)
			}
			rows = append(rows, []string{kindNames[p.Kind], fmt.Sprint(p.Count), fmt.Sprint(p.Episodes), p.First, reason})
		}
		title := fmt.Sprintf("Why episodes went wrong (%s)", r.Run.ID)
		if n := len(r.Problems) - maxProblems; n > 0 {
			title += fmt.Sprintf(", the %d most frequent of %d reasons", maxProblems, len(r.Problems))
		}
		table(title, []string{"what", "times", "episodes", "first", "reason"}, rows)
	}
}
