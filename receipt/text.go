package receipt

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// Write writes the receipt of the run id as text.
func Write(w io.Writer, id string, r store.Receipt) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(label, format string, a ...any) { fmt.Fprintf(tw, "  %s\t%s\n", label, fmt.Sprintf(format, a...)) }
	fmt.Fprintf(tw, "Receipt of run %s\n", id)
	line("harness", "%s", r.Harness)
	line("started", "%s", stamp(r.Started))
	if r.Finished.IsZero() {
		line("finished", "not yet (or stopped before its end)")
	} else {
		line("finished", "%s (%s)", stamp(r.Finished), r.Finished.Sub(r.Started).Round(time.Second))
	}
	line("suite", "%s (tasks %s)", r.Suite, r.SuiteHash)
	if r.SuiteFile != "" {
		line("suite.yaml", "sha256 %s", r.SuiteFile)
	}
	if r.Filter != "" || r.Tag != "" {
		var sel []string
		if r.Filter != "" {
			sel = append(sel, fmt.Sprintf("--filter %q", r.Filter))
		}
		if r.Tag != "" {
			sel = append(sel, fmt.Sprintf("--tag %q", r.Tag))
		}
		line("selection", "%s", strings.Join(sel, " "))
	}
	agent := r.Agent
	if r.Model != "" {
		agent += ", model " + r.Model
	}
	line("agent", "%s", agent)
	if len(r.AgentParams) > 0 && string(r.AgentParams) != "{}" {
		line("agent params", "%s", r.AgentParams)
	}
	line("observation", "%s", r.Obs)
	if r.PromptHash != "" {
		line("prompt", "template %s", r.PromptHash)
	}
	if r.Judge == nil {
		line("judge", "none")
	} else {
		j := strings.Join(r.Judge.Models, ", ")
		if r.Judge.Provider != "" {
			j += " (" + r.Judge.Provider + ")"
		}
		if len(r.Judge.BaseURLs) > 0 {
			j += " at " + strings.Join(r.Judge.BaseURLs, ", ")
		}
		line("judge", "%s, prompt %s", j, r.Judge.PromptHash)
	}
	if len(r.Seeds) > 0 {
		var s []string
		for _, k := range sortedKeys(r.Seeds) {
			s = append(s, fmt.Sprintf("%s %d", k, r.Seeds[k]))
		}
		line("seeds", "%s", strings.Join(s, ", "))
	}
	maxCost := "none"
	if r.MaxCost > 0 {
		maxCost = fmt.Sprintf("$%.2f an episode", r.MaxCost)
	}
	line("repeats", "%d, parallel %d, max cost %s", r.Repeat, r.Parallel, maxCost)
	m := r.Machine
	line("machine", "%s/%s, kernel %s, %d cores, %s memory, %s", m.OS, m.Arch, orNone(m.Kernel), m.Cores, Bytes(m.Memory), m.Go)
	envs := "local (the default)"
	if len(r.Envs) > 0 {
		envs = strings.Join(r.Envs, " ")
	}
	line("--env", "%s", envs)
	tw.Flush()

	if len(r.Places) > 0 {
		fmt.Fprintln(w, "\nEnvironments of the pool")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  place\tserves\tscreen\twhere")
		for _, p := range r.Places {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Types, ", "), screen(p.Screen), where(p.Remote))
		}
		tw.Flush()
	}
	if len(r.Seen) > 0 {
		fmt.Fprintln(w, "\nEnvironments as started")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  place\tkind\tscreen\tdisplay\tversions")
		for _, s := range r.Seen {
			var v []string
			for _, k := range sortedKeys(s.Versions) {
				v = append(v, k+" "+s.Versions[k])
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", s.Place, s.Kind, s.Screen, orNone(s.Display), orNone(strings.Join(v, ", ")))
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "\nDebian packages on this machine")
	if r.Packages == nil {
		fmt.Fprintln(w, "  not read (no dpkg-query)")
	} else {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range sortedKeys(r.Packages) {
			fmt.Fprintf(tw, "  %s\t%s\n", p, version(r.Packages[p]))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nTasks (%d)\n", len(r.Tasks))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  task\tfile\tfile sha256\tcontent sha256\tscreen")
	for _, t := range r.Tasks {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", t.ID, t.File, short(t.FileHash), short(t.Hash), t.Resolution)
		for _, a := range t.Assets {
			h := short(a.Hash)
			if h == "" {
				h = "unreadable"
			}
			fmt.Fprintf(tw, "    asset\t%s\t%s\n", a.Name, h)
		}
	}
	tw.Flush()
	if len(r.Resumed) > 0 {
		fmt.Fprintln(w, "\nResumed")
		for _, x := range r.Resumed {
			if len(x.Drift) == 0 {
				fmt.Fprintf(w, "  %s, harness %s: no drift\n", stamp(x.At), x.Harness)
				continue
			}
			fmt.Fprintf(w, "  %s, harness %s, with drift:\n", stamp(x.At), x.Harness)
			for _, d := range x.Drift {
				fmt.Fprintf(w, "    %s\n", d)
			}
		}
	}
	return nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
