package observe

import (
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// SameName reports whether an accessibility name matches the name a task
// or an agent wrote. Names are compared without the spaces around them:
// toolkits pad menu items ("Save As...      ") and the linearised tree,
// which is what authors copy from, shows them trimmed.
func SameName(want, got string) bool {
	return strings.TrimSpace(want) == strings.TrimSpace(got)
}

// Resolution is what a role and name target resolved to.
type Resolution struct {
	Located
	// Matches is how many showing elements the target matched after its
	// narrowing fields (app, window, text).
	Matches int
	// Ambiguous is set when more than one of them was left after the
	// preference for the modal and the active window, so that the element
	// was chosen by document order alone: the target should be narrowed.
	Ambiguous bool
}

// Resolve finds the showing element that a role and name target names.
// Matching elements are narrowed by the target's app, window title and
// text, then Nth picks the nth of them in document order (a negative Nth
// counts from the last). Without Nth, a
// match in a modal dialog wins over the others, then one in the active
// window: "Close" means the dialog's button, not the window's behind it.
// Where that still leaves several, the first is taken and the resolution
// is marked Ambiguous.
func (t *Tree) Resolve(tg action.Target, screen action.Size) (Resolution, error) {
	var found []Located
	for _, n := range t.Filter(Options{Screen: screen, MaxNodes: 1 << 20}) {
		if targets(tg, n) {
			found = append(found, n)
		}
	}
	if len(found) == 0 {
		return Resolution{}, fmt.Errorf("%w: no element %s is showing", ErrNotFound, tg)
	}
	if tg.Nth != 0 {
		i := tg.Nth - 1
		if tg.Nth < 0 {
			i = len(found) + tg.Nth
		}
		if i < 0 || i >= len(found) {
			return Resolution{}, fmt.Errorf("%w: element %s: there are %d such elements showing", ErrNotFound, tg, len(found))
		}
		return Resolution{Located: found[i], Matches: len(found)}, nil
	}
	best := found
	for _, prefer := range []func(Located) bool{inModal, inActive} {
		var some []Located
		for _, n := range best {
			if prefer(n) {
				some = append(some, n)
			}
		}
		if len(some) > 0 {
			best = some
		}
	}
	return Resolution{Located: best[0], Matches: len(found), Ambiguous: len(best) > 1}, nil
}

func targets(tg action.Target, n Located) bool {
	if tg.Role != "" && !sameRole(tg.Role, n.Role) {
		return false
	}
	if tg.Name != "" && !SameName(tg.Name, n.Name) || tg.Name == "" && tg.Role == "" {
		return false
	}
	if tg.App != "" && !strings.EqualFold(tg.App, n.App) {
		return false
	}
	if tg.Window != "" && (n.Window == nil || !SameName(tg.Window, n.Window.Name)) {
		return false
	}
	if tg.Text != "" && !strings.Contains(n.Text, tg.Text) {
		return false
	}
	return true
}

// ShowsText reports whether a showing element's name or text holds text.
func (t *Tree) ShowsText(text string, screen action.Size) bool {
	for _, n := range t.Filter(Options{Screen: screen, MaxNodes: 1 << 20}) {
		if strings.Contains(n.Name, text) || strings.Contains(n.Text, text) {
			return true
		}
	}
	return false
}

// sameRole reports whether a target's role names a node's. A web page's
// document is "document web" on the desktop (AT-SPI) and "document" in
// the browser environment's tree: either name matches both, so that one
// trajectory targets a page's frame in both environments.
func sameRole(want, got string) bool {
	if strings.EqualFold(want, got) {
		return true
	}
	doc := func(r string) bool { return strings.EqualFold(r, "document") || strings.EqualFold(r, "document web") }
	return doc(want) && doc(got)
}

func inModal(n Located) bool {
	return n.Window != nil && (n.Window.Has("modal") || n.Node.Has("modal") || n.Window.Role == "dialog" && n.Window.Has("active"))
}

func inActive(n Located) bool { return n.Window != nil && n.Window.Has("active") }
