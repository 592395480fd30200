package viewer

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with the file under testdata, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

// pairedRoot writes three runs over the same six tasks and a fourth over
// two others: run-b wins write-note and sort-rows from run-a and loses
// open-menu; run-c beats both in most tasks.
func pairedRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	day := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tasks := []string{"write-note", "sort-rows", "carry-result", "open-menu", "save-file", "rename-tab"}
	levels := []string{"wood", "bronze", "silver", "wood", "bronze", "silver"}
	outcomes := map[string][]string{
		"run-a": {"failure", "failure", "failure", "success", "failure", "error"},
		"run-b": {"success", "success", "failure", "failure", "failure", "success"},
		"run-c": {"success", "success", "success", "success", "success", "failure"},
	}
	for i, id := range []string{"run-a", "run-b", "run-c"} {
		var eps []episode
		for k, task := range tasks {
			eps = append(eps, episode{task, levels[k], outcomes[id][k], 2})
		}
		makeRun(t, root, id, "agent-"+id, day.Add(time.Duration(i)*time.Hour), eps)
	}
	makeRun(t, root, "run-d", "agent-d", day.Add(4*time.Hour), []episode{{"other-one", "wood", "success", 2}, {"other-two", "wood", "failure", 2}})
	return root
}

// section is the element of a page with the id, from its opening tag to
// its closing one.
func section(body, id string) string {
	return regexp.MustCompile(`(?s)<section id="` + id + `">.*?</section>`).FindString(body)
}

// The comparison page of two runs says their paired comparison as
// proctor report --compare says it (the same sentence and differences),
// the tasks won and lost each opening the episodes side by side.
func TestPairedComparison(t *testing.T) {
	root := pairedRoot(t)
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/compare?run=run-a&run=run-b")
	if code != http.StatusOK {
		t.Fatalf("compare = %d: %s", code, body)
	}
	paired := section(body, "paired")
	if paired == "" {
		t.Fatalf("no paired comparison:\n%s", body)
	}
	golden(t, "compare-pair.html", paired)

	var rs []*report.Report
	for _, id := range []string{"run-a", "run-b"} {
		r, err := report.Load(filepath.Join(root, id))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var text bytes.Buffer
	c := report.Compare(rs[0], rs[1], report.DefaultStatOptions())
	if err := report.WriteComparison(&text, c, "text"); err != nil {
		t.Fatal(err)
	}
	words := strings.Split(text.String(), "\n")[2]
	if !strings.HasPrefix(words, "run-b is better than run-a by") {
		t.Fatalf("the report's sentence: %q", words)
	}
	if got := regexp.MustCompile(`<p id="paired-words">([^<]*)</p>`).FindStringSubmatch(paired); got == nil || html.UnescapeString(got[1]) != words {
		t.Errorf("the page's sentence %q, the report's %q", got, words)
	}
	for _, m := range []string{"success rate (points)", "weighted score (points)", "milestone average (×100)"} {
		var line string
		for l := range strings.Lines(text.String()) {
			if strings.HasPrefix(l, m) {
				line = strings.TrimSpace(strings.TrimPrefix(l, m))
			}
		}
		if line == "" || !strings.Contains(html.UnescapeString(paired), "<td>"+m+`</td><td class="n">`+line+"</td>") {
			t.Errorf("the report says %s %q, the page does not", m, line)
		}
	}
	for _, want := range []string{"won 2, lost 1, tied 2", "McNemar's exact test p = 1.00", "undecided in one (errors only): 1 task"} {
		if !strings.Contains(paired, want) {
			t.Errorf("the paired comparison does not say %q", want)
		}
	}
	rows := regexp.MustCompile(`<tr class="(won|lost)"><td>([^<]*)</td>.*?<a href="([^"]*)">side by side</a>`).FindAllStringSubmatch(paired, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2])
		code, side := get(t, h, html.UnescapeString(r[3]))
		if code != http.StatusOK || !strings.Contains(side, "Side by side: "+r[2]) {
			t.Errorf("%s side by side: %d", r[2], code)
		}
	}
	if strings.Join(got, ", ") != "won sort-rows, won write-note, lost open-menu" {
		t.Errorf("tasks won and lost: %q", got)
	}

	// The server keeps the comparison while the runs are unchanged, and
	// compares again when one changes.
	st, err := store.Open(filepath.Join(root, "run-b"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res {
		if x.Task == "open-menu" {
			x.Outcome = "success"
			if err := st.SaveResult(x); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	if _, body := get(t, h, "/compare?run=run-a&run=run-b"); !strings.Contains(body, "run-b won 2, lost 0, tied 3") {
		t.Errorf("after run-b succeeded at open-menu, the comparison still says:\n%s", section(body, "paired"))
	}
}

// Of three runs or more, the page shows each run's tasks won / lost
// against each other, the cell of B against A the mirror of A against B,
// and each opening the pair's page, which counts the same.
func TestPairMatrix(t *testing.T) {
	root := pairedRoot(t)
	h := (&Server{Root: root}).Handler()
	code, body := get(t, h, "/compare?run=run-a&run=run-b&run=run-c&run=run-d")
	if code != http.StatusOK {
		t.Fatalf("compare = %d: %s", code, body)
	}
	if section(body, "paired") != "" {
		t.Error("four runs get one pair's comparison")
	}
	m := section(body, "matrix-section")
	golden(t, "compare-matrix.html", m)
	cells := regexp.MustCompile(`<td class="n[^"]*" title="[^"]*"><a href="([^"]*)">([^<]*)</a></td>`).FindAllStringSubmatch(m, -1)
	if len(cells) != 12 {
		t.Fatalf("%d cells, want 12 (four runs, each against three)", len(cells))
	}
	ids := []string{"run-a", "run-b", "run-c", "run-d"}
	at := func(row, col int) []string { // cells row by row, the diagonal left out
		i := row*3 + col
		if col > row {
			i--
		}
		return cells[i]
	}
	for i := range ids {
		for j := range ids {
			if i == j {
				continue
			}
			c, mirror := at(i, j), at(j, i)
			if ids[i] == "run-d" || ids[j] == "run-d" {
				if c[2] != "none in common" {
					t.Errorf("%s against %s: %q, want none in common", ids[i], ids[j], c[2])
				}
				continue
			}
			var won, lost, mw, ml int
			if _, err := sscan(c[2], &won, &lost); err != nil {
				t.Fatalf("cell %q: %v", c[2], err)
			}
			sscan(mirror[2], &mw, &ml)
			if won != ml || lost != mw {
				t.Errorf("%s against %s is %s, %s against %s is %s: not mirrors", ids[i], ids[j], c[2], ids[j], ids[i], mirror[2])
			}
			if want := "/compare?run=" + ids[j] + "&amp;run=" + ids[i]; c[1] != want {
				t.Errorf("%s against %s opens %q, want %q", ids[i], ids[j], c[1], want)
			}
			_, pair := get(t, h, html.UnescapeString(c[1]))
			if want := regexp.MustCompile(ids[i] + ` won (\d+), lost (\d+),`).FindStringSubmatch(pair); want == nil || want[1]+" / "+want[2] != c[2] {
				t.Errorf("%s against %s: the cell says %s, the pair's page %q", ids[i], ids[j], c[2], want)
			}
		}
	}
	if !strings.Contains(m, `class="n better"`) {
		t.Error("no cell marked better: run-c against run-a wins 4 tasks and loses none")
	}
}

func sscan(s string, won, lost *int) (int, error) {
	return fmt.Sscanf(s, "%d / %d", won, lost)
}

// The comparison page refuses one run, an unknown run and a run chosen
// twice, and says of runs over different tasks that they cannot be
// compared.
func TestPairedComparisonErrors(t *testing.T) {
	h := (&Server{Root: pairedRoot(t)}).Handler()
	for _, tc := range []struct {
		target string
		code   int
		want   []string
		absent []string
	}{
		{"/compare?run=run-a", 400, []string{"pick at least two runs"}, nil},
		{"/compare", 400, []string{"pick at least two runs"}, nil},
		{"/compare?run=run-a&run=nobody", 404, []string{`run &#34;nobody&#34;: not found`}, nil},
		{"/compare?run=run-a&run=run-a", 400, []string{`run &#34;run-a&#34; is chosen twice`}, nil},
		{"/compare?run=run-a&run=run-d", 200, []string{"run-a and run-d decided no task in common, so they cannot be compared."},
			[]string{`id="paired-diffs"`, `id="won-lost"`}},
		{"/compare?run=run-a&run=run-b&run=run-d", 200, []string{`run-d and run-a decided no task in common`, "none in common"}, nil},
	} {
		code, body := get(t, h, tc.target)
		if code != tc.code {
			t.Errorf("%s = %d, want %d", tc.target, code, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s does not say %q", tc.target, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(body, a) {
				t.Errorf("%s has %q", tc.target, a)
			}
		}
	}
}
