package osworld

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
	"github.com/xuri/excelize/v2"
)

// fixtures copies testdata/examples into a folder of its own, with the
// files' URL placeholder set to base.
func fixtures(t *testing.T, base string) string {
	t.Helper()
	src := t.TempDir()
	err := filepath.WalkDir("testdata/examples", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", p)
		dst := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(strings.ReplaceAll(string(b), "https://files.example/", base+"/")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func byID(t *testing.T, tasks []*imports.Task) map[string]*imports.Task {
	t.Helper()
	out := map[string]*imports.Task{}
	for _, it := range tasks {
		out[it.ID] = it
	}
	return out
}

// TestImport converts each fixture, one class of OSWorld's files each,
// and checks its status, reasons and what it became.
func TestImport(t *testing.T) {
	tasks, err := Read(fixtures(t, "https://files.example"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(t, tasks)
	tests := []struct {
		id     string
		status imports.Status
		reason string // in the reasons, when blocked or not imported
	}{
		{"volume", imports.Runnable, ""},
		{"infeasible", imports.Runnable, ""},
		{"terminal-size", imports.Runnable, ""},
		{"log", imports.Blocked, "file not fetched: https://files.example/app.log"},
		{"fill", imports.Runnable, ""},
		{"tabs", imports.Blocked, "live web: config[2] opens https://www.example.com"},
		{"drive", imports.NotImported, "account: config[0]: googledrive signs in to a Google account"},
		{"settings", imports.Blocked, "app not installable: config[0]: VS Code is not in Debian"},
		{"either", imports.Runnable, ""},
		{"either-unsupported", imports.NotImported, "not supported: evaluator compare_audios"},
		{"csv", imports.Runnable, ""},
		{"mirror", imports.Runnable, ""},
		{"prefs", imports.Runnable, ""},
		{"list", imports.Runnable, ""},
		{"gsettings", imports.Runnable, ""}, // in a GNOME session
		{"download", imports.Blocked, "live web: the instruction names https://images.example/bird.jpeg"},
		{"local-page", imports.Runnable, ""}, // this machine's address is not the web
		{"broken", imports.NotImported, "examples/multi_apps/broken.json: "},
		{"escape", imports.NotImported, `examples/os/escape.json: id "../../escape" is not a plain name`},
	}
	for _, tc := range tests {
		it := got[tc.id]
		if it == nil {
			t.Errorf("%s: not read", tc.id)
			continue
		}
		// Files are fetched by Write: before it, a task that needs one
		// is not blocked for it yet.
		if tc.id == "log" {
			continue
		}
		if s := it.Status(); s != tc.status {
			t.Errorf("%s: %s, want %s (%v)", tc.id, s, tc.status, it.Reasons)
		}
		var rs []string
		for _, r := range it.Reasons {
			rs = append(rs, r.String())
		}
		if tc.reason != "" && !strings.Contains(strings.Join(rs, "\n"), tc.reason) {
			t.Errorf("%s: reasons %q lack %q", tc.id, rs, tc.reason)
		}
	}

	if got["gsettings"].Task.Environment.Session != task.SessionGNOME || got["volume"].Task.Environment.Session != "" {
		t.Errorf("sessions: gsettings %q, volume %q; want gnome, none", got["gsettings"].Task.Environment.Session, got["volume"].Task.Environment.Session)
	}
	// A launched app is waited for, its window shown before the agent's
	// first screen.
	if l := got["tabs"].Task.Setup[1].Launch; l == nil || l.App != "chromium" || l.WaitWindow != "Chromium" || l.Timeout == 0 || len(l.Args) != 0 {
		t.Errorf("tabs' launch: %+v; want chromium, its window waited for", l)
	}
	// pkill chrome closes this desktop's Chromium (killed if it stays);
	// another pattern runs as it is.
	if a := got["tabs"].Task.After; len(a) != 2 || a[0].Close == nil || a[0].Close.Title != "Chromium" || !a[0].Close.Kill || a[0].Close.Timeout == 0 ||
		a[1].Run == nil || a[1].Run.Command != "pkill -f socat" {
		t.Errorf("tabs' steps after the agent: %+v; want Chromium closed, then pkill -f socat", a)
	}
	vol := got["volume"].Task
	if vol.Setup[0].Run == nil || vol.Setup[0].Run.Command != homeFolders {
		t.Errorf("volume's setup does not begin with the home's folders: %+v", vol.Setup[0])
	}
	if len(vol.Setup) != 3 || vol.Setup[1].Click == nil || vol.Setup[1].Click.X != 960 || vol.Setup[1].Click.Y != 540 || vol.Setup[2].Sleep == nil {
		t.Errorf("volume's setup: %+v; want a click at the screen's centre and a sleep", vol.Setup)
	}
	if c := vol.Checks[0]; c.Kind != check.Exact || c.Expected != "100" || !strings.Contains(c.Probe.Command, "pactl") {
		t.Errorf("volume's check: %+v; want exact 100 on the command (its newline off)", c)
	}
	if vol.Unproven == "" || len(vol.Gold) != 0 || vol.Origin.Peer != Peer || vol.Origin.File != "examples/os/volume.json" || len(vol.Origin.SHA256) != 64 {
		t.Errorf("volume: unproven %q, gold %v, origin %+v", vol.Unproven, vol.Gold, vol.Origin)
	}

	inf := got["infeasible"].Task
	if inf.Kind != task.InfeasibleTask || len(inf.Gold) != 1 || inf.Gold[0].Kind != action.Fail || inf.Unproven != "" {
		t.Errorf("infeasible: kind %s, gold %v, unproven %q", inf.Kind, inf.Gold, inf.Unproven)
	}

	ts := got["terminal-size"].Task
	var after []string
	for _, st := range ts.After {
		after = append(after, st.Spec().Kind())
	}
	// GNOME's ctrl+alt+t opens a terminal: here the built-in one is launched.
	if strings.Join(after, ",") != "sleep,sleep,launch,sleep,type,keys" || ts.After[2].Launch.App != "bash" || ts.After[2].Launch.WaitWindow != "bash" || *ts.After[4].Type != "stty size" {
		t.Errorf("terminal-size's steps after the agent: %v", after)
	}
	if len(ts.Checks) != 2 || ts.Checks[0].Kind != check.Contains || ts.Checks[1].Kind != check.NotContains || ts.Checks[0].Probe.Command != "/bin/bash -c 'cat $HOME/.config/size'" {
		t.Errorf("terminal-size's checks: %+v", ts.Checks)
	}

	either := got["either"].Task
	if len(either.Checks) != 1 || either.Checks[0].Kind != check.AnyOf || len(either.Checks[0].Any) != 2 || either.Checks[0].Any[1].Probe.File != "~/b.txt" {
		t.Errorf("either's checks: %+v; want one any check of the two files", either.Checks)
	}
	if c := got["csv"].Task.Checks; len(c) != 1 || c[0].Kind != check.FileEqual || c[0].File != "~/out.csv" || c[0].Asset != "osworld/csv/expected/out_gold.csv" {
		t.Errorf("csv's checks: %+v; want the given file, out.csv, compared with the expected one", c)
	}

	if c := got["mirror"].Task.Checks; len(c) != 1 || c[0].Kind != check.DocumentEqual || c[0].Mode != "image" || c[0].Options["metric"] != "check_image_mirror" || c[0].File != "~/Desktop/m.png" {
		t.Errorf("mirror's checks: %+v; want document_equal of the image by check_image_mirror", c)
	}
	prefs := got["prefs"].Task.Checks
	if len(prefs) != 3 || prefs[0].Kind != check.Predicate || !strings.Contains(prefs[0].Expr, `v matches "dark"`) ||
		prefs[1].Value != `(?m)^user_pref\("mail\.identity\.id1\.auto_quote", false\);$` || prefs[2].Kind != check.NotContains {
		t.Errorf("prefs' checks: %+v", prefs)
	}
	list := got["list"].Task
	if c := list.Checks; len(c) != 4 || c[0].Probe.Command != "ls -R $HOME/mail.bak" || c[0].Value != "(?m)^letter-1\\.eml$" || c[2].Kind != check.NotContains ||
		c[3].Probe.File != "~/.config/GIMP/2.10/gimprc" || c[3].Value != `(?m)^\s*\(*theme(?:\s+.*)?\s+"Dark"\)*\s*$` {
		t.Errorf("list's checks: %+v; want the output of the step after the agent read by its command, and gimprc's line", c)
	}

	log := got["log"].Task
	// An option stays as it is, a path becomes the home's.
	if l := log.Setup[2].Launch; l == nil || l.App != "vlc" || strings.Join(l.Args, " ") != "--no-audio ~/app.log" {
		t.Errorf("log's launch: %+v", log.Setup[2].Launch)
	}
	if r := log.Setup[3].Run; r == nil || r.Command != "python3 -c 'open('\\''log.txt'\\'', '\\''w'\\'').write('\\'''\\'')'" {
		t.Errorf("log's python: %+v; want Debian's python3", log.Setup[3])
	}
	if len(log.Origin.Fetch) != 2 || log.Checks[0].Kind != check.FileEqual || log.Checks[0].Asset != "osworld/log/expected/log_Gold.txt" {
		t.Errorf("log: fetch %+v, check %+v", log.Origin.Fetch, log.Checks[0])
	}
	fill := got["fill"].Task
	if c := fill.Checks[0]; c.Kind != check.DocumentEqual || c.Mode != "xlsx" || c.File != "~/fill.xlsx" || c.Asset != "osworld/fill/expected/fill_gold.xlsx" || c.Options["rules"] == nil {
		t.Errorf("fill's check: %+v", c)
	}
	var kinds []string
	for _, st := range fill.After {
		kinds = append(kinds, st.Spec().Kind())
	}
	if strings.Join(kinds, ",") != "focus,keys,close" {
		t.Errorf("fill's steps after the agent: %v", kinds)
	}
	tabs := got["tabs"].Task
	if len(tabs.Setup) != 3 || tabs.Setup[1].Launch.App != "chromium" || len(tabs.Setup[1].Launch.Args) != 0 {
		t.Errorf("tabs: the socat relay and the debugging port must go: %+v", tabs.Setup)
	}
}

// TestWrite writes a suite: the imported tasks lint, the files tasks need
// are fetched from a local server with their hashes (or, without
// --fetch, block the task and are named), and the table counts every
// task.
func TestWrite(t *testing.T) {
	files := map[string]string{"/berry.png": "\x89PNG", "/out_gold.csv": "a,b\n1,2\n", "/app.log": "line 1\nline 2\n", "/log_Gold.txt": "line 2\n", "/fill.xlsx": workbook(t, ""), "/fill_gold.xlsx": workbook(t, "7")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(b))
	}))
	defer srv.Close()
	src := fixtures(t, srv.URL)
	for _, fetch := range []bool{false, true} {
		tasks, err := Read(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "suite")
		if err := imports.Write(context.Background(), out, imports.Suite{Name: "osworld"}, tasks, imports.Options{Fetch: fetch}); err != nil {
			t.Fatal(err)
		}
		s, ps := task.Load(out)
		if len(ps) > 0 {
			t.Fatalf("fetch %v: the imported suite does not lint:\n%v", fetch, ps)
		}
		log := byID(t, tasks)["log"]
		c := imports.Count(tasks)
		if fetch {
			b, err := os.ReadFile(filepath.Join(out, "assets", "osworld", "log", "expected", "log_Gold.txt"))
			if err != nil || string(b) != "line 2\n" || log.Status() != imports.Runnable || len(log.Task.Origin.Fetch[1].SHA256) != 64 {
				t.Fatalf("fetched %q (%v), status %s, origin %+v", b, err, log.Status(), log.Task.Origin.Fetch)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings after the fetch: %v", s.Warnings)
			}
		} else {
			if log.Status() != imports.Blocked || !strings.Contains(log.Reasons[0].String(), "file not fetched: "+srv.URL+"/app.log") {
				t.Fatalf("not fetched: %s %v", log.Status(), log.Reasons)
			}
			if len(s.Warnings) != 6 || !strings.Contains(s.Warnings[0].Msg, "is not fetched yet: proctor import --fetch downloads it from") {
				t.Errorf("warnings: %v", s.Warnings)
			}
		}
		if c.Tasks != 19 || c.Mapped != c.Runnable+c.Blocked || c.NotImported != 4 || fetch && c.Runnable != 12 || !fetch && c.Runnable != 8 {
			t.Errorf("fetch %v: counts %+v", fetch, c)
		}
		table, err := os.ReadFile(filepath.Join(out, imports.TableFile))
		if err != nil || !strings.Contains(string(table), "| settings | vs_code | blocked | app not installable: config[0]: VS Code is not in Debian |") {
			t.Errorf("the table:\n%s", table)
		}
		if _, err := os.Stat(filepath.Join(out, "vs_code", "settings.yaml")); err != nil {
			t.Errorf("a blocked task is written: %v", err)
		}
		if _, err := os.Stat(filepath.Join(out, "multi_apps", "either-unsupported.yaml")); err == nil {
			t.Error("a task not imported was written")
		}
	}
}

// workbook is an xlsx file whose A1 holds a1 (empty: nothing).
func workbook(t *testing.T, a1 string) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if a1 != "" {
		if err := f.SetCellValue("Sheet1", "A1", a1); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	m, _ := filepath.Glob("testdata/examples/*/*.json")
	for _, p := range m {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, err := Parse(b)
		if err != nil {
			return
		}
		it := Import(tf, "os", "x.json", imports.Hash(b), "")
		if it.Mapped() && it.Task == nil {
			t.Fatal("a mapped task without a task")
		}
	})
}

// TestOverrides: every solution written for an OSWorld task reads, and an
// import gives it to its feasible task, which is then no longer unproven.
func TestOverrides(t *testing.T) {
	ovs, err := Overrides()
	if err != nil {
		t.Fatal(err)
	}
	if len(ovs) < 3 {
		t.Fatalf("%d overrides", len(ovs))
	}
	for id, o := range ovs {
		if !idRE.MatchString(id) || o.Gold[len(o.Gold)-1].Kind != action.Done || len(o.Wrong) == 0 {
			t.Errorf("override %s: gold %v, %d wrong trajectories", id, o.Gold, len(o.Wrong))
		}
	}
	const id = "7b7617bd-57cc-468e-9c91-40c4ec2bcb3d"
	feasible := &task.Task{ID: id, Kind: task.StateTask, Unproven: "no solution"}
	if err := applyOverride(feasible); err != nil || feasible.Unproven != "" || len(feasible.Gold) != 2 || len(feasible.Wrong) != 1 {
		t.Errorf("override not applied: %v %+v", err, feasible)
	}
	infeasible := &task.Task{ID: id, Kind: task.InfeasibleTask, Gold: []action.Action{{Kind: action.Fail}}}
	if err := applyOverride(infeasible); err != nil || len(infeasible.Gold) != 1 || infeasible.Gold[0].Kind != action.Fail {
		t.Errorf("an infeasible task took an override: %+v", infeasible)
	}
}

func TestHomeCommand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cat /home/user/a.txt", "cat $HOME/a.txt"},
		{"export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'\ngsettings get org.gnome.shell favorite-apps", "gsettings get org.gnome.shell favorite-apps"},
		{"export DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus; gsettings get a b", "gsettings get a b"},
		{"export DBUS_SESSION_BUS_ADDRESS=\"unix:path=/run/user/1000/bus\" && xdg-open /home/user/project", "xdg-open $HOME/project"},
		{"DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus' gsettings set a b c", "gsettings set a b c"},
		{"echo $DBUS_SESSION_BUS_ADDRESS", "echo $DBUS_SESSION_BUS_ADDRESS"},
		{"cd /home/user; export DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus; gsettings get a b", "cd $HOME; gsettings get a b"},
		{"cd /tmp && DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus gsettings get a b", "cd /tmp && gsettings get a b"},
		{"true; export DBUS_SESSION_BUS_ADDRESS='x'", "true; "},
	}
	for _, tc := range tests {
		if got := homeCommand(tc.in); got != tc.want {
			t.Errorf("homeCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
