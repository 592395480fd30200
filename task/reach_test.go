package task

import (
	"slices"
	"testing"
)

// TestReach: a browser's reach is the task's and its suite's, joined.
func TestReach(t *testing.T) {
	dir := writeSuite(t, "network: web\nallow: [\"https://docs.example\", \"ws://127.0.0.1:9000\"]\n")
	s, ps := Load(dir)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	tk := &Task{Environment: Environment{Type: "browser", Allow: []string{"http://127.0.0.1:8000"}}}
	for _, c := range []struct {
		name    string
		s       *Suite
		origins []string
		web     bool
	}{
		{"no suite", nil, []string{"http://127.0.0.1:8000"}, false},
		{"suite", s, []string{"http://127.0.0.1:8000", "https://docs.example", "ws://127.0.0.1:9000"}, true},
	} {
		origins, web := Reach(c.s, tk)
		if !slices.Equal(origins, c.origins) || web != c.web {
			t.Errorf("%s: Reach = %q, %v; want %q, %v", c.name, origins, web, c.origins, c.web)
		}
	}
	tk.Environment.Network = NetworkWeb
	if _, web := Reach(nil, tk); !web {
		t.Error("the task's network: web is not the web")
	}
	for o, ok := range map[string]bool{"https://a.example": true, "http://127.0.0.1:8080/": true, "wss://x:1": true,
		"file:///etc": false, "https://a.example/p": false, "https://u@a.example": false, "https://a.example?q": false, "a.example": false} {
		if got := OriginProblem(o) == ""; got != ok {
			t.Errorf("OriginProblem(%q) = %q", o, OriginProblem(o))
		}
	}
}
