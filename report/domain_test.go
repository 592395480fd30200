package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// scienceRun is a run of tasks in three domains, levels and interfaces,
// with an infrastructure error.
func scienceRun() *Report {
	mk := func(task, domain, level, iface, outcome string) store.Result {
		return store.Result{Task: task, Level: level, Weight: 1, Apps: []string{domain}, Domain: domain, Kind: "state", Difficulty: "easy",
			Interface: iface, Env: "x11", Outcome: outcome, Steps: 3, Duration: time.Second}
	}
	return Make("runs/science", store.Run{ID: "science", Agent: "openai"}, []store.Result{
		mk("kalgebra-plot", "algebra", "paper", "gui", "success"), mk("kalgebra-define", "algebra", "wood", "gui+cli", "failure"),
		mk("pymol-color", "biochemistry", "paper", "gui", "success"), mk("pymol-align", "biochemistry", "wood", "gui+cli", "success"),
		mk("pymol-save", "biochemistry", "wood", "gui+cli", "error"), mk("grass-extract", "gis", "bronze", "gui", "failure")})
}

// TestByDomain: a run of several domains gets ScienceBoard's table, the
// success of each level, kind and interface by domain (a column each)
// and overall, in text, Markdown and JSON; a run of one domain gets none.
func TestByDomain(t *testing.T) {
	r := scienceRun()
	for _, format := range []string{"text", "markdown"} {
		var b bytes.Buffer
		if err := Write(&b, []*Report{r}, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "By domain (columns)") {
			t.Fatalf("%s: no table by domain:\n%s", format, b.String())
		}
		golden(t, "domains."+format, b.String())
	}
	var b bytes.Buffer
	if err := Write(&b, []*Report{r}, "json"); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ByDomain struct {
			Domains []string `json:"domains"`
			Rows    []struct {
				Dimension string `json:"dimension"`
				Key       string `json:"key"`
				Domains   []struct {
					Passed  int `json:"passed"`
					Decided int `json:"decided"`
				} `json:"domains"`
			} `json:"rows"`
			Total struct {
				Overall struct {
					Passed, Decided, Errors int
				} `json:"overall"`
			} `json:"total"`
		} `json:"by_domain"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got) != 1 {
		t.Fatalf("JSON: %v\n%s", err, b.String())
	}
	d := got[0].ByDomain
	if strings.Join(d.Domains, ",") != "algebra,biochemistry,gis" {
		t.Fatalf("domains %v", d.Domains)
	}
	var wood string
	for _, row := range d.Rows {
		if row.Dimension == "level" && row.Key == "wood" {
			for _, c := range row.Domains {
				wood += fmt.Sprintf("%d/%d ", c.Passed, c.Decided)
			}
		}
	}
	if wood != "0/1 1/1 0/0 " {
		t.Errorf("wood by domain %q, want 0/1 1/1 0/0", wood)
	}
	if o := d.Total.Overall; o.Passed != 3 || o.Decided != 5 || o.Errors != 1 {
		t.Errorf("total %+v, want 3 of 5 decided, 1 error", o)
	}
	one := Make("runs/one", store.Run{ID: "one"}, results())
	b.Reset()
	if err := Write(&b, []*Report{one}, "text"); err != nil || one.ByDomain != nil || strings.Contains(b.String(), "By domain (columns)") {
		t.Errorf("a run of one domain has a table by domain: %v\n%s", err, b.String())
	}
}
