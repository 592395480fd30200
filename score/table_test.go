package score

import (
	"fmt"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/check"
)

// TestDomainBreakdown: a column per domain, rows for each value of each
// dimension (levels from paper to gold) and the total; a dimension no
// result names has no rows; fewer than two domains give no table.
func TestDomainBreakdown(t *testing.T) {
	mk := func(domain, level, iface string, o check.Outcome) Result {
		return Result{Domain: domain, Level: level, Kind: "state", Interface: iface, Weight: 1, Outcome: o}
	}
	tests := []struct {
		name string
		rs   []Result
		want string // "domains | key: passed/decided per domain ... overall" rows
	}{
		{"one domain", []Result{mk("gis", "paper", "gui", check.Success), mk("gis", "gold", "gui", check.Failure)}, "none"},
		{"two domains", []Result{
			mk("gis", "gold", "gui", check.Success), mk("algebra", "paper", "gui+cli", check.Failure),
			mk("gis", "paper", "gui", check.Failure), mk("gis", "paper", "", check.Error)},
			"algebra,gis | level paper: 0/1 0/1 0/2 | level gold: 0/0 1/1 1/1 | kind state: 0/1 1/2 1/3 | " +
				"interface : 0/0 0/0 0/0 | interface gui: 0/0 1/2 1/2 | interface gui+cli: 0/1 0/0 0/1 | total: 0/1 1/2 1/3"},
		{"no interface named", []Result{mk("gis", "paper", "", check.Success), mk("", "paper", "", check.Failure)},
			",gis | level paper: 0/1 1/1 1/2 | kind state: 0/1 1/1 1/2 | total: 0/1 1/1 1/2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table := DomainBreakdown(tc.rs, DomainRows...)
			got := "none"
			if table != nil {
				cells := func(r DomainRow) string {
					var out []string
					for _, c := range append(r.Cells, r.Overall) {
						out = append(out, fmt.Sprintf("%d/%d", c.Passed, c.Decided))
					}
					return strings.Join(out, " ")
				}
				parts := []string{strings.Join(table.Domains, ",")}
				for _, r := range table.Rows {
					parts = append(parts, fmt.Sprintf("%s %s: %s", r.Dimension, r.Key, cells(r)))
				}
				got = strings.Join(append(parts, "total: "+cells(table.Total)), " | ")
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
