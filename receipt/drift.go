package receipt

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/store"
)

// Drift lists every difference between a run's receipt and cur, the
// receipt the same run would have today (its suite and environment as
// they are now), a line each: the harness, suite.yaml, each task's file,
// content, screen size and assets, tasks gone or newly selected, the
// package versions, the places of the pool and their screens, the
// machine, and the agent's and the judge's prompt templates. Places are
// compared only when cur has them, packages only when cur could read
// them (cur.Packages not nil). None means the suite and environment
// still match.
func Drift(run, cur store.Receipt) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if run.Harness != cur.Harness {
		add("harness: %s → %s", run.Harness, cur.Harness)
	}
	if run.SuiteFile != cur.SuiteFile {
		add("suite: suite.yaml %s", changed(run.SuiteFile, cur.SuiteFile))
	}
	old := map[string]store.TaskReceipt{}
	for _, t := range run.Tasks {
		old[t.ID] = t
	}
	now := map[string]bool{}
	for _, t := range cur.Tasks {
		now[t.ID] = true
		o, ok := old[t.ID]
		if !ok {
			add("task %s: selected now, not in the run", t.ID)
			continue
		}
		out = append(out, taskDrift(o, t)...)
	}
	for _, t := range run.Tasks {
		if !now[t.ID] {
			add("task %s: not in the suite's selection any more", t.ID)
		}
	}
	if cur.Packages != nil {
		for _, p := range sortedKeys(run.Packages) {
			was := run.Packages[p]
			is, ok := cur.Packages[p]
			if !ok || was == is {
				continue
			}
			add("package %s: %s → %s", p, version(was), version(is))
		}
		for _, p := range sortedKeys(cur.Packages) {
			if _, ok := run.Packages[p]; !ok && cur.Packages[p] != "" {
				add("package %s: used now (%s), not recorded by the run", p, cur.Packages[p])
			}
		}
	} else if len(run.Packages) > 0 {
		add("packages: cannot be read on this machine (the run recorded %d)", len(run.Packages))
	}
	if cur.Places != nil {
		out = append(out, placeDrift(run.Places, cur.Places)...)
	}
	out = append(out, machineDrift(run.Machine, cur.Machine)...)
	if run.PromptHash != cur.PromptHash {
		add("agent %s: prompt template %s", run.Agent, changed(run.PromptHash, cur.PromptHash))
	}
	if run.Judge != nil && cur.Judge != nil && run.Judge.PromptHash != cur.Judge.PromptHash {
		add("judge: prompt %s", changed(run.Judge.PromptHash, cur.Judge.PromptHash))
	}
	return out
}

func taskDrift(o, t store.TaskReceipt) []string {
	var out []string
	add := func(format string, a ...any) {
		out = append(out, fmt.Sprintf("task %s: ", t.ID)+fmt.Sprintf(format, a...))
	}
	switch {
	case o.File != t.File:
		add("its file %s is now %s", o.File, t.File)
	case o.FileHash != t.FileHash:
		add("its file %s %s", t.File, changed(o.FileHash, t.FileHash))
	case o.Hash != t.Hash:
		add("its content as loaded changed (%s → %s), its file did not: suite.yaml or a template", short(o.Hash), short(t.Hash))
	}
	if o.Resolution != t.Resolution {
		add("screen size %s → %s", o.Resolution, t.Resolution)
	}
	was := map[string]string{}
	for _, a := range o.Assets {
		was[a.Name] = a.Hash
	}
	is := map[string]bool{}
	for _, a := range t.Assets {
		is[a.Name] = true
		h, ok := was[a.Name]
		switch {
		case !ok:
			add("uses the asset %s now, not in the run", a.Name)
		case h != a.Hash:
			add("asset %s %s", a.Name, changed(h, a.Hash))
		}
	}
	for _, a := range o.Assets {
		if !is[a.Name] {
			add("does not use the asset %s any more", a.Name)
		}
	}
	return out
}

func placeDrift(run, cur []store.PlaceReceipt) []string {
	var out []string
	old := map[string]store.PlaceReceipt{}
	for _, p := range run {
		old[p.Name] = p
	}
	now := map[string]bool{}
	for _, p := range cur {
		now[p.Name] = true
		o, ok := old[p.Name]
		if !ok {
			out = append(out, fmt.Sprintf("environment %s: in the pool now, not in the run's", p.Name))
			continue
		}
		if o.Screen != p.Screen {
			out = append(out, fmt.Sprintf("environment %s: screen size %s → %s", p.Name, screen(o.Screen), screen(p.Screen)))
		}
		if !slices.Equal(o.Types, p.Types) {
			out = append(out, fmt.Sprintf("environment %s: serves %s → %s", p.Name, strings.Join(o.Types, ", "), strings.Join(p.Types, ", ")))
		}
		if o.Remote != p.Remote {
			out = append(out, fmt.Sprintf("environment %s: %s → %s", p.Name, where(o.Remote), where(p.Remote)))
		}
	}
	for _, p := range run {
		if !now[p.Name] {
			out = append(out, fmt.Sprintf("environment %s: not in the pool any more", p.Name))
		}
	}
	return out
}

func machineDrift(run, cur store.Machine) []string {
	var out []string
	add := func(what string, was, is any) {
		if was != is {
			out = append(out, fmt.Sprintf("machine: %s %v → %v", what, was, is))
		}
	}
	add("system", run.OS+"/"+run.Arch, cur.OS+"/"+cur.Arch)
	add("kernel", run.Kernel, cur.Kernel)
	add("cores", run.Cores, cur.Cores)
	if run.Memory != cur.Memory {
		out = append(out, fmt.Sprintf("machine: memory %s → %s", Bytes(run.Memory), Bytes(cur.Memory)))
	}
	add("Go", run.Go, cur.Go)
	return out
}

// changed says how a hash changed: "changed (a → b)", or that the file
// appeared or went.
func changed(was, is string) string {
	switch {
	case was == "":
		return "is there now (" + short(is) + "), not in the run"
	case is == "":
		return "is gone (was " + short(was) + ")"
	}
	return "changed (" + short(was) + " → " + short(is) + ")"
}

// short is the first 12 hex digits of a hash.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func version(v string) string {
	if v == "" {
		return "not installed"
	}
	return v
}

func screen(s string) string {
	if s == "" {
		return "each task's"
	}
	return s
}

func where(remote bool) string {
	if remote {
		return "on another machine"
	}
	return "on this machine"
}

// Bytes writes a size in GiB (or MiB below one GiB); "unknown" for 0.
func Bytes(n int64) string {
	switch {
	case n <= 0:
		return "unknown"
	case n < 1<<30:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
