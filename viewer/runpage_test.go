package viewer

import (
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// guestRun writes run-g: three episodes of an enterprise suite's
// personas, one of them run again on another guest after the first was
// lost under it.
func guestRun(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	dir := makeRun(t, root, "run-g", "openai", day, []episode{
		{"approve-leave", "wood", "success", 2}, {"file-expense", "bronze", "failure", 3}, {"book-room", "wood", "success", 2}})
	makeRun(t, root, "run-plain", "openai", day, []episode{{"write-note", "wood", "success", 1}})
	st, err := store.OpenRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, _ := st.Results()
	personas := map[string]string{"approve-leave": "manager", "file-expense": "intern", "book-room": "manager"}
	for _, r := range rs {
		r.Persona = personas[r.Task]
		if r.Task == "file-expense" {
			r.Attempts = 2
		}
		if err := st.SaveResult(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SaveLost(store.Lost{Name: "guest https://10.0.0.5:7400", At: day.Add(90 * time.Second), Task: "file-expense",
		Reason: "while running file-expense: no environment: guest https://10.0.0.5:7400 died and cannot be started again"}); err != nil {
		t.Fatal(err)
	}
	// As a run folder from before the episode was kept apart records it.
	if err := st.SaveLost(store.Lost{Name: "guest https://10.0.0.6:7400", At: day.Add(95 * time.Second),
		Reason: "while running book-room: no environment: guest https://10.0.0.6:7400 died and cannot be started again"}); err != nil {
		t.Fatal(err)
	}
	return root
}

// The run page shows the environments lost from the pool and the
// episodes run again, and a persona column and filter where the run's
// episodes have personas (and neither where they have none).
func TestRunPageLostGuestsAttemptsPersonas(t *testing.T) {
	h := (&Server{Root: guestRun(t)}).Handler()
	tests := []struct {
		target      string
		want, never []string
	}{
		{"/run/run-g", []string{`<dd id="run-lost"><a href="#lost">2</a></dd>`, `<section id="lost">`,
			`<td class="env-name">guest https://10.0.0.5:7400</td><td>2026-11-24 09:01:30</td><td class="lost-episode"><a href="/run/run-g/episode?repeat=0&amp;task=file-expense">file-expense</a></td>`,
			`<td class="env-name">guest https://10.0.0.6:7400</td><td>2026-11-24 09:01:35</td><td class="lost-episode">–</td>`,
			"while running file-expense: no environment: guest https://10.0.0.5:7400 died",
			`file-expense</a> <span class="attempts"`, ">2 attempts</span>",
			`class="sort ">Persona</a>`, `<td class="persona">intern</td>`, `<select name="persona" id="f-persona"><option value="">any</option><option>intern</option><option>manager</option>`},
			[]string{`approve-leave</a> <span class="attempts"`}},
		{"/run/run-g?persona=manager", []string{"approve-leave", "book-room", "2 episodes", `<option selected>manager</option>`}, []string{`<td class="persona">intern</td>`}},
		{"/run/run-g?sort=persona&desc=1", []string{`class="sort sorted-down">Persona</a>`}, nil},
		{"/run/run-g/episode?task=file-expense&repeat=0", []string{`<span id="attempts" class="attempts">2 attempts</span>`}, nil},
		{"/run/run-g/episode?task=book-room&repeat=0", nil, []string{`id="attempts"`}},
		{"/run/run-plain", []string{"write-note"}, []string{"Persona", "f-persona", `id="lost"`, "run-lost", `class="attempts"`}},
	}
	for _, tc := range tests {
		code, body := get(t, h, tc.target)
		if code != 200 {
			t.Fatalf("%s: %d\n%s", tc.target, code, body)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q", tc.target, w)
			}
		}
		for _, w := range tc.never {
			if strings.Contains(body, w) {
				t.Errorf("%s has %q", tc.target, w)
			}
		}
	}
	// The persona order: by persona, the others kept in order.
	_, body := get(t, h, "/run/run-g?sort=persona")
	if i, j := strings.Index(body, ">file-expense<"), strings.Index(body, ">approve-leave<"); i < 0 || j < 0 || i > j {
		t.Errorf("sorted by persona, intern's file-expense is not first")
	}
}

// The leaderboard shortens a version built from a checkout to its
// commit; a released version, and anything else, stays whole.
func TestShortVersion(t *testing.T) {
	tests := []struct{ in, want string }{
		{"v0.3.1-0.20261122090000-5a1c0ffee123+dirty", "5a1c0ff+dirty"},
		{"v0.3.1-0.20261122090000-5a1c0ffee123", "5a1c0ff"},
		{"v0.0.0-20261122090000-5a1c0ffee123", "5a1c0ff"},
		{"v1.2.0-rc.1.0.20261122090000-5a1c0ffee123", "5a1c0ff"},
		{"devel 5a1c0ffee123-dirty", "devel 5a1c0ff-dirty"},
		{"devel", "devel"},
		{"v1.2.0", "v1.2.0"},
		{"test", "test"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := shortVersion(tc.in); got != tc.want {
			t.Errorf("shortVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
