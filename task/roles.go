package task

import (
	"cmp"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/internal/suggest"
	"github.com/proctor-eval/proctor/observe"
)

// roleWarnings warns of every role of a target or an element query in doc
// (a task's decoded document) that no environment's tree gives: such a
// target or query finds nothing. A role in any spelling of a known one
// ("toggle-button" for "toggle button") is known. The warning names the
// known role nearest the unknown one, if one is near.
func roleWarnings(f *fileCtx, doc any) Problems {
	var ps Problems
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch v := v.(type) {
		case map[string]any:
			if role, ok := v["role"].(string); ok && role != "" && len(path) > 0 && (path[len(path)-1] == "target" || path[len(path)-1] == "element") &&
				!strings.Contains(role, "{{") && !observe.KnownRole(role) {
				p := f.problem(append(append([]any{}, path...), "role"), "unknown role %q: no environment's tree gives it, so nothing matches%s",
					role, suggest.DidYouMean(observe.CanonicalRole(role), observe.KnownRoles()))
				p.Warning = true
				ps = append(ps, p)
			}
			for k, c := range v {
				walk(c, append(append([]any{}, path...), k))
			}
		case []any:
			for i, c := range v {
				walk(c, append(append([]any{}, path...), i))
			}
		}
	}
	walk(doc, nil)
	slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) })
	return ps
}
