package viewer

import (
	"errors"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
)

// changesView is an episode's "what changed" as its page shows it: the
// violations and the allowed changes apart, the noise filtered out
// listed apart (collapsed), with the text diffs of small text files.
type changesView struct {
	Type       string
	Violations []changeView
	Allowed    []changeView
	Filtered   []changeView
	Notes      []string
	Truncated  bool
	// What the snapshots and the diff cost, in milliseconds.
	BeforeMS, AfterMS, DiffMS float64
}

// changeView is one change: its line ("deleted file ~/a.txt"), why it is
// allowed or filtered, and its text diff a line each.
type changeView struct {
	Line     string
	Kind     string
	Op       string
	Allowed  string
	Filtered string
	Diff     []diffLine
}

// diffLine is a line of a unified diff and how it is drawn: add, del,
// hunk (an @@ line), file (--- and +++), note (a line of the diff's own,
// "\\ No newline at end of file") or context.
type diffLine struct {
	Class, Text string
}

// Empty reports whether nothing changed, noise aside.
func (c *changesView) Empty() bool { return len(c.Violations)+len(c.Allowed) == 0 }

// episodeChanges reads an episode's state diff; nil when none was
// recorded.
func episodeChanges(runDir string, res store.Result) (*changesView, error) {
	db, err := store.Open(runDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	d, err := db.Changes(res.Task, res.Repeat)
	if errors.Is(err, store.ErrNoChanges) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return makeChangesView(d), nil
}

// makeChangesView sorts a diff's changes into violations, allowed and
// filtered, each in the diff's order.
func makeChangesView(d *statediff.Diff) *changesView {
	v := &changesView{Type: d.Type, Notes: d.Notes, Truncated: d.Truncated, BeforeMS: d.BeforeMS, AfterMS: d.AfterMS, DiffMS: d.DiffMS}
	for _, c := range d.Changes {
		if c.Allowed == "" {
			v.Violations = append(v.Violations, changeLine(c))
		} else {
			v.Allowed = append(v.Allowed, changeLine(c))
		}
	}
	for _, c := range d.Filtered {
		v.Filtered = append(v.Filtered, changeLine(c))
	}
	return v
}

func changeLine(c statediff.Change) changeView {
	return changeView{Line: c.String(), Kind: string(c.Kind), Op: string(c.Op), Allowed: c.Allowed, Filtered: c.Filtered, Diff: diffLines(c.TextDiff)}
}

// diffLines splits a unified diff into its lines, each classed.
func diffLines(diff string) []diffLine {
	if diff == "" {
		return nil
	}
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		class := "context"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			class = "file"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		case strings.HasPrefix(l, `\`):
			class = "note" // "\ No newline at end of file"
		}
		out = append(out, diffLine{Class: class, Text: l})
	}
	return out
}
