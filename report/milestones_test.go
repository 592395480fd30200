package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
)

// enterpriseRun is a run of two templates with milestones over three
// applications and personas: repeats, an infrastructure error and a task
// without milestones among them.
func enterpriseRun(t *testing.T) *Report {
	mk := func(task, template, app, persona, outcome string, reached map[string]bool, ids ...string) store.Result {
		v := check.Verdict{Outcome: check.Outcome(outcome)}
		got := 0.0
		for _, id := range ids {
			v.Milestones = append(v.Milestones, check.MilestoneResult{ID: id, Weight: 1, Pass: reached[id]})
			if reached[id] {
				got++
			}
		}
		if len(ids) > 0 {
			v.MilestoneScore = got / float64(len(ids))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return store.Result{Task: task, Template: template, Level: "silver", Weight: 4, Apps: []string{app}, Domain: app, Persona: persona,
			Kind: "state", Interface: "gui", Env: "browser", Outcome: outcome, Milestone: v.MilestoneScore, Verdict: b, Steps: 10, Duration: 30 * time.Second}
	}
	both := map[string]bool{"merged": true, "commented": true}
	return Make("runs/enterprise", store.Run{ID: "enterprise", Agent: "openai"}, []store.Result{
		mk("rt-merge-a", "rt-merge-{{slug}}", "rt", "service-agent", "success", both, "merged", "commented"),
		mk("rt-merge-a", "rt-merge-{{slug}}", "rt", "service-agent", "failure", map[string]bool{"merged": true}, "merged", "commented"),
		mk("rt-merge-b", "rt-merge-{{slug}}", "rt", "service-agent", "failure", map[string]bool{"commented": true}, "merged", "commented"),
		mk("rt-merge-c", "rt-merge-{{slug}}", "rt", "service-agent", "error", nil, "merged", "commented"),
		mk("tryton-lead-a", "tryton-lead-{{slug}}", "tryton", "sales-rep", "failure", map[string]bool{"lead": true}, "lead", "opportunity", "amount"),
		mk("redmine-lock-a", "", "redmine", "crm-admin", "success", nil),
	})
}

// TestMilestoneTables: a run with milestones gets a table per set of
// milestones (a template's instances), a row per task and a column per
// milestone, with the share of the decided episodes that reached each;
// errors and tasks without milestones are left out, and a run without
// milestones has no table.
func TestMilestoneTables(t *testing.T) {
	r := enterpriseRun(t)
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r}, format); err != nil {
			t.Fatal(err)
		}
		golden(t, "enterprise."+format, b.String())
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "json"); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Tables   []MilestoneTable `json:"milestone_tables"`
		Personas []Persona        `json:"personas"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got) != 1 {
		t.Fatalf("JSON: %v\n%s", err, b.String())
	}
	var personas []string
	for _, p := range got[0].Personas {
		personas = append(personas, fmt.Sprintf("%s %d/%d", p.Name, p.Summary.Passed, p.Summary.Decided))
	}
	if strings.Join(personas, ", ") != "crm-admin 1/1, sales-rep 0/1, service-agent 1/3" {
		t.Errorf("JSON personas: %s", strings.Join(personas, ", "))
	}
	var lines []string
	for _, tb := range got[0].Tables {
		line := fmt.Sprintf("%s %v: %d episodes, reached %v", tb.Template, tb.Milestones, tb.Episodes, tb.Reached)
		for _, mt := range tb.Tasks {
			line += fmt.Sprintf("; %s %d %v", mt.Task, mt.Episodes, mt.Reached)
		}
		lines = append(lines, line)
	}
	want := []string{
		"rt-merge-{{slug}} [merged commented]: 3 episodes, reached [2 2]; rt-merge-a 2 [2 1]; rt-merge-b 1 [0 1]",
		"tryton-lead-{{slug}} [lead opportunity amount]: 1 episodes, reached [1 0 0]; tryton-lead-a 1 [1 0 0]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("milestone tables\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	b.Reset()
	plain := Make("runs/x", store.Run{ID: "x"}, results())
	if err := Write(&b, []*Report{plain}, "text"); err != nil || len(plain.Milestones) != 0 || strings.Contains(b.String(), "Milestones reached") {
		t.Errorf("a run without milestones has a milestone table: %v\n%s", err, b.String())
	}
}
