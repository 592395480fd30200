package task

import (
	"fmt"
	"slices"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
)

// Capability is something an environment offers beyond a screen and
// input. A task needs the capabilities its setup, checks and gold use; an
// environment declares the ones it has (env.Info), so that a task is
// refused before a run instead of failing at check time.
type Capability string

// The capabilities.
const (
	CapTree      Capability = "tree"      // the accessibility tree: element probes and checks, role/name targets, set-of-mark
	CapCommands  Capability = "commands"  // shell commands: command probes and checks, code actions, run steps
	CapApps      Capability = "apps"      // applications started by name: launch and open steps
	CapFiles     Capability = "files"     // reading and writing files: file probes and checks, write and copy steps
	CapClipboard Capability = "clipboard" // the clipboard's text
	CapWindows   Capability = "windows"   // the top-level windows: window probes, checks and waits
	CapElements  Capability = "elements"  // a record of the element under each click: process checks
	CapPage      Capability = "page"      // a browser's web page: page probes (URL, text, selectors, JavaScript, cookies, storage)
	CapLoopback  Capability = "loopback"  // the environment's own loopback: http and xmlrpc probes with a port (APIs of apps with network: private)
	CapAfter     Capability = "after"     // steps after the agent, before the checks (env.StepRunner)
)

// Capabilities lists every capability.
var Capabilities = []Capability{CapTree, CapCommands, CapApps, CapFiles, CapClipboard, CapWindows, CapElements, CapPage, CapLoopback, CapAfter}

// DesktopCapabilities are what an X11 desktop offers: everything but a
// web page.
var DesktopCapabilities = []Capability{CapTree, CapCommands, CapApps, CapFiles, CapClipboard, CapWindows, CapElements, CapLoopback, CapAfter}

// TypeCapabilities is what each environment type offers: lint refuses a
// task that needs more than its type has. A new environment type adds its
// entry here.
var TypeCapabilities = map[string][]Capability{
	"x11": DesktopCapabilities,
	// A desktop over VNC has a screen, input and the cut text; a "proctor
	// guest" beside it adds everything else. What a VNC place offers is
	// known only once it is reached, so lint lets every capability through
	// and the run's pre-flight refuses a task whose place lacks one
	// (env.Info.Caps: vnc.Caps without a guest).
	"vnc": Capabilities,
	// A browser has its page's tree and elements, its tabs as windows, and
	// the files of its episode's folder (downloads, uploads); no shell and
	// no clipboard (env/browser's Caps, which its tests compare).
	"browser": {CapTree, CapElements, CapWindows, CapFiles, CapPage, CapAfter},
	// An Android device has its window hierarchy and elements, a shell,
	// files in shared storage and the focused activity as its window; no
	// clipboard ADB reads everywhere (env/android's Caps, which its tests
	// compare).
	"android": {CapTree, CapCommands, CapApps, CapFiles, CapWindows, CapElements, CapAfter},
}

// Need is a capability a task needs, and the place that needs it.
type Need struct {
	Cap   Capability
	Path  []any  // where in the task file: checks, 2
	Label string // what needs it, for messages: check "the report exists"
}

// Needs lists what the task needs of its environment, in task order.
func (t *Task) Needs() []Need {
	var out []Need
	add := func(c Capability, label string, path ...any) {
		out = append(out, Need{Cap: c, Path: path, Label: label})
	}
	for _, sec := range t.Sections() {
		if sec.Name == "after" && len(sec.Steps) > 0 {
			add(CapAfter, "the steps after the agent", "after")
		}
		for i, st := range sec.Steps {
			spec := st.Spec()
			if spec == nil {
				continue // lint reports it
			}
			label := "the " + spec.Kind() + " step"
			switch {
			case st.Open != nil && t.Environment.TypeOrDefault() == "browser":
				// A browser opens a URL or a page of its folder itself.
			case st.Launch != nil, st.Open != nil:
				add(CapApps, label, sec.Name, i)
			case st.Run != nil:
				add(CapCommands, label, sec.Name, i)
			case st.Write != nil, st.Copy != nil:
				add(CapFiles, label, sec.Name, i)
			case st.WaitWindow != nil, st.Focus != nil, st.Close != nil:
				add(CapWindows, label, sec.Name, i)
			case st.WaitElement != nil:
				add(CapTree, label, sec.Name, i)
			}
		}
	}
	specs := func(path []any, ss []check.Spec) {
		check.Each(path, ss, func(p []any, s check.Spec) {
			label := fmt.Sprintf("check %q", s.Label())
			for _, c := range specNeeds(s) {
				add(c, label, p...)
			}
		})
	}
	specs([]any{"checks"}, t.Checks)
	for i, m := range t.Milestones {
		specs([]any{"milestones", i, "checks"}, m.Checks)
	}
	for i, a := range t.Gold {
		label := fmt.Sprintf("the gold %s", a.Kind)
		if a.Kind == action.Code {
			add(CapCommands, label, "gold", i)
		}
		if a.Target != nil && (a.Target.Role != "" || a.Target.Name != "" || a.Target.Tag > 0) {
			add(CapTree, label, "gold", i)
		}
	}
	return out
}

// specNeeds is what one check reads.
func specNeeds(s check.Spec) []Capability {
	var out []Capability
	if p := s.Probe; p != nil {
		switch {
		case p.Command != "":
			out = append(out, CapCommands)
		case p.File != "":
			out = append(out, CapFiles)
		case p.Element != nil:
			out = append(out, CapTree)
		case p.Window:
			out = append(out, CapWindows)
		case p.Clipboard:
			out = append(out, CapClipboard)
		case p.Page != nil:
			out = append(out, CapPage)
		}
		if q, ok := p.Service(); ok && q.Port() != 0 {
			out = append(out, CapLoopback)
		}
	}
	switch {
	case s.Kind == check.CommandKind || s.Command != "":
		out = append(out, CapCommands)
	case s.File != "":
		out = append(out, CapFiles)
	case s.Element != nil:
		out = append(out, CapTree)
	case s.Window != "":
		out = append(out, CapWindows)
	}
	if s.Kind == check.Process {
		out = append(out, CapElements)
	}
	return out
}

// Missing lists the task's needs that caps lacks.
func (t *Task) Missing(caps []Capability) []Need {
	var out []Need
	for _, n := range t.Needs() {
		if !slices.Contains(caps, n.Cap) {
			out = append(out, n)
		}
	}
	return out
}
