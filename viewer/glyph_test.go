package viewer

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/store"
)

// textRunes are the characters beyond ASCII the pages may use: common
// punctuation, which every text font has. An icon is inline SVG, never a
// glyph (an emoji font is missing from many installs, Debian's among
// them).
const textRunes = "·–—…×›‘’“”−"

// TestNoGlyphIcons: no page, stylesheet or script needs a glyph beyond
// common punctuation, with a step that has every kind of action the
// filmstrip has an icon for, and every one of them is drawn.
func TestNoGlyphIcons(t *testing.T) {
	root := pagesRoot(t)
	st, err := store.OpenRun(root + "/run-a")
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := st.Turns("write-note", 0)
	var all []action.Action
	for k := range actionIcons {
		all = append(all, action.Action{Kind: k})
	}
	steps[0].Actions, _ = json.Marshal(all)
	if err := st.SaveTurn(steps[0]); err != nil {
		t.Fatal(err)
	}
	st.Close()
	srv := httptest.NewServer((&Server{Root: root}).Handler())
	defer srv.Close()
	for _, target := range []string{"/", "/?by=all", "/?sort=cost&desc=0", "/run/run-a", "/run/run-a?sort=level", "/run/run-a?sort=level&desc=1",
		"/run/run-a/episode?task=write-note&repeat=0", "/run/run-a/episode?task=sort-rows&repeat=0", "/run/run-l/live",
		"/compare?run=run-a&run=run-b", "/side?" + url.Values{"run": {"run-a", "run-b"}, "task": {"write-note"}}.Encode(),
		"/search?q=note", "/run/nope", "/static/viewer.css", "/static/viewer.js"} {
		resp, err := srv.Client().Get(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for i, r := range string(b) {
			if r > 127 && !strings.ContainsRune(textRunes, r) {
				t.Errorf("%s: %q (U+%04X) at %d: %s", target, r, r, i, b[max(0, i-80):min(len(b), i+40)])
				break
			}
		}
	}
	for k, name := range actionIcons {
		if _, ok := iconPaths[name]; !ok {
			t.Errorf("action %s: no icon %q", k, name)
		}
	}
	// The step with every action draws an icon for each, labelled.
	got := string(icons(store.Turn{Actions: mustJSON(t, []action.Action{{Kind: action.Click}, {Kind: action.Navigate}})}))
	if strings.Count(got, "<svg") != 2 || !strings.Contains(got, `aria-label="click"`) || !strings.Contains(got, `aria-label="navigate"`) {
		t.Errorf("icons of a click and a navigation: %s", got)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
