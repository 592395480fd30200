package score

import "slices"

// DomainTable is a set of results broken down by domain, a column per
// domain and one over all of them, and down the side by each value of
// some dimensions: the layout of ScienceBoard's tables of results.
// `proctor tasks stats` fills its cells with counts of tasks, a report
// with success rates.
type DomainTable struct {
	// Domains are the columns, sorted ("" for results of no domain).
	Domains []string `json:"domains"`
	// Rows are the values of each dimension, a dimension after another,
	// each in its order (Before).
	Rows []DomainRow `json:"rows"`
	// Total is every result, by domain and over all.
	Total DomainRow `json:"total"`
}

// DomainRow is the results of one value (Key) of a dimension summarized
// in each domain (Cells, one per column of the table) and over all of
// them (Overall).
type DomainRow struct {
	Dimension Dimension `json:"dimension,omitempty"`
	Key       string    `json:"key"`
	Cells     []Summary `json:"domains"`
	Overall   Summary   `json:"overall"`
}

// DomainRows are the dimensions down the side of a DomainTable: levels,
// kinds, difficulties and interfaces.
var DomainRows = []Dimension{ByLevel, ByKind, ByDifficulty, ByInterface}

// DomainBreakdown breaks the results down by domain and, down the side, by each
// value of dims. It is nil for results of fewer than two domains, whose
// table would repeat the breakdowns. A dimension that no result names
// (every key "") has no rows: each would be the total again.
func DomainBreakdown(rs []Result, dims ...Dimension) *DomainTable {
	var domains []string
	for _, r := range rs {
		if !slices.Contains(domains, r.Domain) {
			domains = append(domains, r.Domain)
		}
	}
	if len(domains) < 2 {
		return nil
	}
	slices.Sort(domains)
	t := &DomainTable{Domains: domains}
	row := func(d Dimension, key string, in func(Result) bool) DomainRow {
		out := DomainRow{Dimension: d, Key: key, Cells: make([]Summary, len(domains))}
		var all []Result
		cells := make([][]Result, len(domains))
		for _, r := range rs {
			if !in(r) {
				continue
			}
			all = append(all, r)
			i := slices.Index(domains, r.Domain)
			cells[i] = append(cells[i], r)
		}
		for i := range cells {
			out.Cells[i] = Summarize(cells[i])
		}
		out.Overall = Summarize(all)
		return out
	}
	for _, d := range dims {
		groups := Breakdown(rs, d)
		if len(groups) == 1 && groups[0].Key == "" {
			continue
		}
		for _, g := range groups {
			t.Rows = append(t.Rows, row(d, g.Key, func(r Result) bool { return slices.Contains(keys(r, d), g.Key) }))
		}
	}
	t.Total = row("", "total", func(Result) bool { return true })
	return t
}
