package viewer

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/store"
)

// changedRun writes a run of two episodes under root; the first
// (free-space) has a state diff made from two snapshots of a desktop: a
// note edited and a download deleted as the task allows, two documents
// deleted and a file's mode opened up outside it, the clipboard changed,
// and a thumbnail and the recent-file list filtered as noise. The second
// (write-note) recorded no diff.
func changedRun(t testing.TB, root string) {
	t.Helper()
	dir := makeRun(t, root, "run-c", "careless", time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), []episode{
		{"free-space", "wood", "success", 2}, {"write-note", "wood", "success", 2},
	})
	b := statediff.NewBudget(statediff.Limits{})
	file := func(key, text, mode string) statediff.Item {
		it := statediff.Item{Kind: statediff.File, Key: key, Type: statediff.TypeFile, Mode: mode}
		b.Content(&it, []byte(text))
		return it
	}
	dirItem := func(key string) statediff.Item {
		return statediff.Item{Kind: statediff.File, Key: key, Type: statediff.TypeDir, Mode: "755"}
	}
	before := &statediff.Snapshot{Type: "x11", Items: []statediff.Item{
		dirItem("~/Documents"), file("~/Documents/thesis.txt", "Chapter 1\nChapter 2\n", "644"),
		file("~/Documents/taxes.csv", "year,amount\n2025,1200\n", "644"), file("~/notes.txt", "milk\neggs\nbread\n", "644"),
		dirItem("~/Downloads"), file("~/Downloads/big.iso", "ISO", "644"), file("~/run.sh", "echo hi\n", "644"),
		{Kind: statediff.Clipboard, Key: "clipboard", Value: ""},
	}}
	after := &statediff.Snapshot{Type: "x11", Items: []statediff.Item{
		dirItem("~/Documents"), file("~/notes.txt", "milk\neggs\nbutter\nbread\n", "644"),
		dirItem("~/Downloads"), file("~/run.sh", "echo hi\n", "777"),
		{Kind: statediff.Clipboard, Key: "clipboard", Value: "rm -rf ~/Documents"},
		file("~/.cache/thumbnails/large/a.png", "PNG", "600"), file("~/.local/share/recently-used.xbel", "<xbel/>", "600"),
	}}
	d := statediff.Compare(before, after, nil, statediff.Allowed{Paths: []string{"~/notes.txt", "~/Downloads/**"}}, statediff.Limits{})
	d.BeforeMS, d.AfterMS, d.DiffMS = 12.4, 13.1, 0.6
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SaveChanges("free-space", 0, d); err != nil {
		t.Fatal(err)
	}
}

func TestDiffLines(t *testing.T) {
	tests := []struct {
		diff string
		want []diffLine
	}{
		{"", nil},
		{"--- a\n+++ b\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n", []diffLine{{"file", "--- a"}, {"file", "+++ b"},
			{"hunk", "@@ -1,2 +1,2 @@"}, {"context", " same"}, {"del", "-old"}, {"add", "+new"}}},
		{"+only\n\\ No newline at end of file\n", []diffLine{{"add", "+only"}, {"note", `\ No newline at end of file`}}},
	}
	for _, tc := range tests {
		if got := diffLines(tc.diff); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.diff, got, tc.want)
		}
	}
}

// changesSection is the episode page's "what changed" section.
func changesSection(body string) string {
	return regexp.MustCompile(`(?s)<section class="changes" id="changes">.*?</section>`).FindString(body)
}

// TestEpisodeChanges: an episode's page shows what changed, the
// violations and the allowed changes apart, each with the text diff of a
// small text file, and the noise filtered out listed apart, collapsed; a
// link at the top says how many of each and leads there. An episode
// without a recorded diff shows neither.
func TestEpisodeChanges(t *testing.T) {
	root := t.TempDir()
	changedRun(t, root)
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/run/run-c/episode?task=free-space&repeat=0")
	if code != http.StatusOK {
		t.Fatalf("episode = %d: %s", code, body)
	}
	for _, w := range []string{`<a href="#changes" id="changes-link" class="fail">what changed: 4 violations, 2 allowed, 2 filtered</a>`} {
		if !strings.Contains(body, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	sec := changesSection(body)
	if sec == "" {
		t.Fatalf("no changes section:\n%s", body)
	}
	for _, tc := range []struct{ list, want string }{
		{"violations", "deleted file ~/Documents/taxes.csv"},
		{"violations", "deleted file ~/Documents/thesis.txt"},
		{"violations", "changed mode of file ~/run.sh (644 -&gt; 777)"},
		{"violations", "changed value of clipboard clipboard"},
		{"allowed", "changed content, size of file ~/notes.txt"},
		{"allowed", `<span class="d-add">&#43;butter</span>`},
		{"allowed", "allowed by <code>~/Downloads/**</code>"},
		{"filtered", "the recent-file list"},
	} {
		list := regexp.MustCompile(`(?s)id="` + tc.list + `">.*?</(ul|details)>`).FindString(sec)
		if !strings.Contains(list, tc.want) {
			t.Errorf("%s lacks %q:\n%s", tc.list, tc.want, list)
		}
	}
	if strings.Contains(sec, `<details class="filtered" id="filtered" open`) {
		t.Error("the noise is not collapsed")
	}
	golden(t, "episode-changes.html", sec)

	_, plain := get(t, h, "/run/run-c/episode?task=write-note&repeat=0")
	if strings.Contains(plain, `id="changes"`) || strings.Contains(plain, "changes-link") {
		t.Error("an episode without a recorded diff shows what changed")
	}
}

// TestNothingChanged: a diff with only noise says that nothing changed
// but noise.
func TestNothingChanged(t *testing.T) {
	v := makeChangesView(&statediff.Diff{Type: "browser", Changes: []statediff.Change{},
		Filtered: []statediff.Change{{Kind: statediff.Cookie, Key: "127.0.0.1 / _ga", Op: statediff.Created, Filtered: "analytics"}}})
	if !v.Empty() || len(v.Filtered) != 1 || v.Filtered[0].Filtered != "analytics" {
		t.Errorf("%+v", v)
	}
}
