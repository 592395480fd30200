// Package scienceboard reads ScienceBoard's task files (tasks/VM/APP/
// ID.json, the tasks it runs in its virtual machine) and turns each into
// a Proctor task, or says why it cannot (package imports writes the
// suite).
//
// ScienceBoard's VM runs patched builds of its applications that serve
// their state over HTTP; its evaluators read those servers. What
// converts:
//
//   - initialize: launch (KAlgebra, TeXstudio and GRASS GIS, which
//     Debian ships; Celestia, ChimeraX and VS Code, which it does not,
//     block the task), execute (shell commands), touch (a file written),
//     download (an asset fetched by proctor import --fetch), ChimeraX's
//     commands (open, turn, color, alphafold_match, clear_log, sent to
//     ChimeraX's REST server, which its launch starts), Lean's import,
//     open, def and query (the file ~/sci/Sci/Basic.lean written as
//     ScienceBoard writes it), and opt (the depth of ScienceBoard's own
//     accessibility tree, its harness's: left out);
//   - evaluate: stop (the answer the agent submits, ANS with its words:
//     an answer check, and that answer the gold; FAIL: an infeasible
//     task, whose gold is fail), TeXstudio's file (the file equals the one
//     written, a placeholder replaced), include (a regular expression
//     found in the file) and compile (pdflatex, with bibtex when the task
//     writes a .bib, succeeds), and Lean's placeholder (the theorem's
//     line is in the file and lake build succeeds without "declaration
//     uses 'sorry'").
//
// The evaluators that read a patched application's server (KAlgebra's
// val, var and eqn, ChimeraX's states, Celestia's and GRASS's info and
// db), and the setup steps that drive one (KAlgebra's tab and func_2d,
// GRASS's map and layer), are named as not supported. The paths of
// ScienceBoard's user, /home/user, are the desktop's home, ~.
package scienceboard

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
)

// Peer is the benchmark's name in task origins.
const Peer = "scienceboard"

// File is a ScienceBoard task file.
type File struct {
	Type        string           `json:"type"`
	Sort        string           `json:"sort"`
	Steps       int              `json:"steps"`
	Instruction string           `json:"instruction"`
	Version     string           `json:"version"`
	Snapshot    string           `json:"snapshot"`
	Initialize  []map[string]any `json:"initialize"`
	Evaluate    []map[string]any `json:"evaluate"`
}

// Parse reads a task file; a file that is not one is an error.
func Parse(b []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Type == "" || strings.TrimSpace(f.Instruction) == "" {
		return nil, fmt.Errorf("not a ScienceBoard task: it has no type or instruction")
	}
	if len(f.Evaluate) == 0 {
		return nil, fmt.Errorf("not a ScienceBoard task: it evaluates nothing")
	}
	return &f, nil
}

// nameRE is what a task file's name and its app's folder may be: they
// name the task's file in the suite written.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// The apps ScienceBoard's tasks launch, as the imported suite declares
// them.
const (
	Celestia  = "celestia"
	ChimeraX  = "chimerax"
	Grass     = "grass"
	KAlgebra  = "kalgebra"
	TeXstudio = "texstudio"
	VSCode    = "vscode"
)

// ChimeraXPort is the port of ChimeraX's REST server, which the launch
// starts and the setup's ChimeraX commands are sent to.
const ChimeraXPort = 60123

// Apps are the apps the imported suite declares; KAlgebra is Proctor's
// built-in one.
var Apps = map[string]task.AppSpec{
	TeXstudio: {Command: "texstudio", Package: "texstudio", Window: "TeXstudio"},
	Grass:     {Command: "grass --gui", Package: "grass-gui", Window: "GRASS"},
	// Debian 12 has none of these: a task that launches one is blocked.
	Celestia: {Command: "celestia-qt6", Window: "Celestia"},
	ChimeraX: {Command: "chimerax", Window: "ChimeraX"},
	VSCode:   {Command: "code", Window: "Visual Studio Code"},
}

// missing says why a Debian desktop lacks an app.
var missing = map[string]string{
	Celestia: "Celestia is not in Debian 12",
	ChimeraX: "UCSF ChimeraX is not in Debian",
	VSCode:   "VS Code, and Lean 4 with Mathlib (the lake project ~/sci of ScienceBoard's VM image), are not in Debian",
}

// Packages are the Debian packages the suite's tasks need beyond their
// apps': pdflatex and bibtex for TeXstudio's compile checks.
var Packages = []string{"texlive-latex-base"}

// Import turns a parsed task file (its app's folder, its name, its path
// within the checkout, its bytes' hash and the checkout's revision
// given) into an imported task.
func Import(f *File, group, name, file, hash, revision string) *imports.Task {
	it := &imports.Task{ID: name, Group: group}
	if !nameRE.MatchString(name) || !nameRE.MatchString(group) {
		it.Block(imports.NotSupported, "%s: an app or name that is not a plain name", file)
		return it
	}
	if f.Sort != "VM" {
		it.Block(imports.NotSupported, "%s: a task of ScienceBoard's %s setting (only its VM tasks are imported)", file, f.Sort)
		return it
	}
	c := &converter{it: it, f: f}
	t := &task.Task{
		ID:          strings.ToLower(group) + "-" + name,
		Instruction: strings.TrimSpace(f.Instruction),
		Domain:      group,
		Level:       level(name),
		Kind:        task.StateTask,
		Environment: task.Environment{Type: "x11", Resolution: "1920x1080"},
		Tags:        []string{Peer, strings.ToLower(group)},
		Origin:      &task.Origin{Peer: Peer, File: file, ID: group + "/" + name, Revision: revision, SHA256: hash},
	}
	if f.Steps > 0 {
		t.MaxStepsValue = f.Steps
	}
	c.t = t
	for i, st := range f.Initialize {
		c.step(fmt.Sprintf("initialize[%d]", i), st)
	}
	c.evaluate()
	if t.App == "" && len(c.apps) > 0 {
		t.App = c.apps[0]
	}
	for _, a := range c.apps {
		if a != t.App {
			t.Apps = append(t.Apps, a)
		}
		if why, ok := missing[a]; ok {
			it.Block(imports.AppMissing, "%s", why)
		}
	}
	if len(t.Gold) == 0 {
		t.Unproven = "ScienceBoard ships no solution of this task"
	}
	it.Task = t
	return it
}

// level reads ScienceBoard's categories from the task's name: A are
// single operations, B harder ones, C questions, D longer work.
func level(name string) task.Level {
	switch {
	case strings.HasPrefix(name, "A-"):
		return task.Wood
	case strings.HasPrefix(name, "D-"):
		return task.Silver
	}
	return task.Bronze
}

// converter holds one task's conversion.
type converter struct {
	it      *imports.Task
	f       *File
	t       *task.Task
	apps    []string
	touched map[string]string // the files touch writes, by ScienceBoard's path
}

func (c *converter) unsupported(format string, args ...any) {
	c.it.Block(imports.NotSupported, format, args...)
}

func (c *converter) use(app string) {
	if !slices.Contains(c.apps, app) {
		c.apps = append(c.apps, app)
	}
}

// home turns ScienceBoard's user's paths into the desktop's home.
func home(p string) string {
	switch {
	case p == "/home/user":
		return "~"
	case strings.HasPrefix(p, "/home/user/"):
		return "~/" + strings.TrimPrefix(p, "/home/user/")
	}
	return p
}

// homeCommand does the same in a shell command.
func homeCommand(s string) string { return strings.ReplaceAll(s, "/home/user", "$HOME") }

// portLike is ScienceBoard's placeholder of its patched apps' port.
const portLike = "«PORTLIKE»"

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// words is a command's words: a list's, or a string's split at spaces
// with its quotes honoured.
func words(v any) ([]string, bool) {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, w := range x {
			s, ok := w.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, len(out) > 0
	case string:
		out, ok := splitQuoted(x)
		return out, ok && len(out) > 0
	}
	return nil, false
}

// splitQuoted splits a shell line at spaces, honouring double and single
// quotes (no escapes inside single quotes, a backslash before a double
// quote inside double quotes).
func splitQuoted(s string) ([]string, bool) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for i := 0; i < len(s); i++ {
		r := rune(s[i])
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == '"' && r == '\\' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case quote != 0:
			cur.WriteByte(s[i])
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(s[i])
			in = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if in {
		out = append(out, cur.String())
	}
	return out, true
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// step converts one initialize step.
func (c *converter) step(where string, st map[string]any) {
	fn := str(st["func"])
	switch fn {
	case "opt":
		// The depth of the accessibility tree ScienceBoard's own server
		// gives its agents: its harness's, not the task's.
	case "execute":
		c.execute(where, st)
	case "launch":
		c.launch(where, st)
	case "touch":
		p, text := str(st["path"]), str(st["text"])
		if p == "" {
			c.unsupported("%s: touch without a path", where)
			return
		}
		if c.touched == nil {
			c.touched = map[string]string{}
		}
		c.touched[p] = text
		c.t.Setup = append(c.t.Setup, task.Step{Write: &task.Write{Path: home(p), Content: text}})
	case "download":
		url, p := str(st["url"]), str(st["path"])
		base := path.Base(p)
		if !strings.HasPrefix(url, "https://") || p == "" || !nameRE.MatchString(base) {
			c.unsupported("%s: a download without an https url or a plain file name", where)
			return
		}
		asset := path.Join(Peer, c.it.Group, c.it.ID, base)
		if !c.t.Origin.Fetches(asset) {
			c.t.Origin.Fetch = append(c.t.Origin.Fetch, task.OriginFile{URL: url, Asset: asset})
		}
		c.t.Setup = append(c.t.Setup, task.Step{Copy: &task.Copy{Asset: asset, To: home(p)}})
	case "clear_log", "chimerax_clear_log":
		c.chimerax("log clear")
	case "open", "chimerax_open":
		if c.f.Type == "Lean" {
			c.lean()
			return
		}
		name := str(st["name"])
		if name == "" {
			c.unsupported("%s: open without a name", where)
			return
		}
		if !strings.Contains(name, "/") {
			c.it.Block(imports.LiveWeb, "%s: ChimeraX fetches %s from the Protein Data Bank", where, name)
		}
		c.chimerax("open " + home(name))
	case "turn", "chimerax_turn":
		c.chimerax(fmt.Sprintf("turn %s %s", str(st["axis"]), str(st["angle"])))
	case "color":
		style := str(st["style"])
		if style == "rainbow" {
			c.chimerax("rainbow")
		} else {
			c.chimerax("color " + style)
		}
	case "alphafold_match":
		c.it.Block(imports.LiveWeb, "%s: ChimeraX fetches %s's AlphaFold model", where, str(st["name"]))
		c.chimerax("alphafold match " + str(st["name"]))
	case "import", "def", "query":
		if c.f.Type != "Lean" {
			c.unsupported("%s: %s outside a Lean task", where, fn)
			return
		}
		c.lean()
	case "tab", "func_2d", "func_3d":
		c.unsupported("%s: %s drives the patched KAlgebra of ScienceBoard's VM through its server", where, fn)
	case "map", "layer", "scale":
		c.unsupported("%s: %s drives the patched GRASS GIS of ScienceBoard's VM through its server", where, fn)
	default:
		c.unsupported("%s: %s steps", where, fn)
	}
}

// chimerax sends a command to ChimeraX's REST server.
func (c *converter) chimerax(command string) {
	c.use(ChimeraX)
	cmd := fmt.Sprintf("curl -fsS -G --data-urlencode %s http://127.0.0.1:%d/run", shellQuote("command="+command), ChimeraXPort)
	c.t.Setup = append(c.t.Setup, task.Step{Run: &task.Run{Command: cmd}})
}

func (c *converter) execute(where string, st map[string]any) {
	var cmd string
	switch x := st["command"].(type) {
	case string:
		cmd = x
	default:
		ws, ok := words(x)
		if !ok {
			c.unsupported("%s: a command that is neither a string nor a list of strings", where)
			return
		}
		var q []string
		for _, w := range ws {
			q = append(q, shellQuote(w))
		}
		cmd = strings.Join(q, " ")
	}
	if strings.Contains(cmd, portLike) {
		c.unsupported("%s: a command to a patched app's server (%s)", where, portLike)
		return
	}
	// ScienceBoard's rm of files that may not be there does not stop it.
	c.t.Setup = append(c.t.Setup, task.Step{Run: &task.Run{Command: homeCommand(cmd) + " || true"}})
}

// launch converts a launch: the program, past the environment's
// assignments (and a terminal it runs in), is one of the apps.
func (c *converter) launch(where string, st map[string]any) {
	ws, ok := words(st["command"])
	if !ok {
		c.unsupported("%s: a launch without a command", where)
		return
	}
	if ws[0] == "gnome-terminal" {
		// gnome-terminal -- /bin/bash -ic "... grass --gui PATH"
		i := slices.Index(ws, "-ic")
		if i < 0 || i+1 >= len(ws) {
			c.unsupported("%s: gnome-terminal %s", where, strings.Join(ws[1:], " "))
			return
		}
		if ws, ok = splitQuoted(ws[i+1]); !ok || len(ws) == 0 {
			c.unsupported("%s: gnome-terminal's command", where)
			return
		}
	}
	for len(ws) > 0 && strings.Contains(ws[0], "=") && !strings.HasPrefix(ws[0], "-") {
		ws = ws[1:]
	}
	if len(ws) == 0 {
		c.unsupported("%s: a launch without a program", where)
		return
	}
	var args []string
	for _, a := range ws[1:] {
		if a != portLike {
			args = append(args, a)
		}
	}
	var app string
	switch path.Base(ws[0]) {
	case "celestia-qt6", "celestia":
		app, args = Celestia, nil
	case "kalgebra":
		app, args = KAlgebra, nil
	case "chimerax":
		app = ChimeraX
		args = []string{"--cmd", fmt.Sprintf("remotecontrol rest start json true port %d", ChimeraXPort)}
	case "texstudio":
		app = TeXstudio
	case "grass":
		app = Grass
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--gui" })
	case "code":
		app = VSCode
	default:
		c.unsupported("%s: launches %s, an application Proctor does not know", where, ws[0])
		return
	}
	for i, a := range args {
		args[i] = home(a)
	}
	c.use(app)
	c.t.Setup = append(c.t.Setup, task.Step{Launch: &task.Launch{App: app, Args: args}})
}

// leanFile is the file ScienceBoard's Lean tasks prove in.
const leanFile = "/home/user/sci/Sci/Basic.lean"

// lean writes the Lean file once, from the task's import, open, def and
// query steps in their order, as ScienceBoard appends them to the file
// of its VM image (which holds import Mathlib).
func (c *converter) lean() {
	if slices.ContainsFunc(c.t.Setup, func(s task.Step) bool { return s.Write != nil && s.Write.Path == home(leanFile) }) {
		return
	}
	var buf []string
	gap := func() {
		if len(buf) == 0 || buf[len(buf)-1] != "" {
			buf = append(buf, "")
		}
	}
	list := func(v any) []string {
		var out []string
		xs, _ := v.([]any)
		for _, x := range xs {
			out = append(out, str(x))
		}
		return out
	}
	for _, st := range c.f.Initialize {
		switch str(st["func"]) {
		case "import":
			libs := slices.DeleteFunc(list(st["libs"]), func(l string) bool { return l == "Mathlib" })
			if len(libs) > 0 {
				gap()
				buf = append(buf, "import "+strings.Join(libs, " "))
			}
		case "open":
			gap()
			buf = append(buf, "open "+strings.Join(list(st["libs"]), " "))
			gap()
		case "def":
			buf = append(buf, str(st["expr"]))
		case "query":
			gap()
			buf = append(buf, leanHeader(str(st["expr"]))+"\n  sorry\n")
		}
	}
	c.t.Setup = append(c.t.Setup, task.Step{Write: &task.Write{Path: home(leanFile), Content: "import Mathlib\n" + strings.Join(buf, "\n")}})
}

// leanHeader is the theorem's line as ScienceBoard writes it: the
// query without its " sorry" (the query ends in "by sorry").
func leanHeader(expr string) string { return strings.TrimSuffix(expr, " sorry") }

// evaluate converts the evaluate items.
func (c *converter) evaluate() {
	answerOnly := true
	for i, e := range c.f.Evaluate {
		where := fmt.Sprintf("evaluate[%d]", i)
		typ := str(e["type"])
		var specs []check.Spec
		switch typ {
		case "stop":
			specs = c.stop(where, e)
		case "file":
			specs = c.texFile(where, e)
		case "include":
			specs = c.texInclude(where, e)
		case "compile":
			specs = c.texCompile(where, e)
		case "placeholder":
			specs = c.leanCheck(where)
		case "val", "var", "eqn":
			c.unsupported("%s: %s reads the patched KAlgebra of ScienceBoard's VM through its server", where, typ)
		case "states":
			c.unsupported("%s: states reads ChimeraX's session state through a plugin of ScienceBoard's", where)
		case "info", "db":
			c.unsupported("%s: %s applies a Python function to the state a patched %s of ScienceBoard's VM serves", where, typ, c.f.Type)
		default:
			c.unsupported("%s: %s evaluators", where, typ)
		}
		if len(specs) == 0 {
			continue
		}
		if _, err := check.CompileAll(specs, nil); err != nil {
			c.unsupported("%s: %v", where, err)
			continue
		}
		if typ != "stop" {
			answerOnly = false
		}
		c.t.Checks = append(c.t.Checks, specs...)
	}
	if !answerOnly {
		c.t.Gold = nil
	}
}

// stop: how the agent must end. ANS with its words is an answer, FAIL an
// infeasible task.
func (c *converter) stop(where string, e map[string]any) []check.Spec {
	switch str(e["value"]) {
	case "FAIL":
		c.t.Kind = task.InfeasibleTask
		c.t.Gold = []action.Action{{Kind: action.Fail}}
		return []check.Spec{{Kind: check.Infeasible}}
	case "ANS":
		var ws []string
		args, _ := e["args"].([]any)
		for _, a := range args {
			ws = append(ws, str(a))
		}
		ans := strings.Join(ws, " ")
		if strings.TrimSpace(ans) == "" {
			c.unsupported("%s: ANS without an answer", where)
			return nil
		}
		c.t.Kind = task.QATask
		c.t.Gold = []action.Action{{Kind: action.Answer, Text: ans}}
		return []check.Spec{{Kind: check.AnswerKind, Accepted: check.Strings{ans}}}
	}
	c.unsupported("%s: stop %s", where, str(e["value"]))
	return nil
}

// texFile: the file equals the text the task wrote, with source replaced
// by target (trailing line breaks aside).
func (c *converter) texFile(where string, e map[string]any) []check.Spec {
	p := str(e["path"])
	before, ok := c.touched[p]
	if !ok {
		c.unsupported("%s: file %s, which the task does not write", where, p)
		return nil
	}
	if src, dst := str(e["source"]), str(e["target"]); e["source"] != nil && e["target"] != nil {
		before = strings.ReplaceAll(before, src, dst)
	}
	return []check.Spec{{Kind: check.Exact, Probe: &check.Probe{File: home(p)}, Expected: before, As: "string", CaseSense: true}}
}

// texInclude: the pattern is found in the file.
func (c *converter) texInclude(where string, e map[string]any) []check.Spec {
	p, pat := str(e["path"]), str(e["pattern"])
	if p == "" || pat == "" {
		c.unsupported("%s: include without a path or pattern", where)
		return nil
	}
	return []check.Spec{{Kind: check.Contains, Probe: &check.Probe{File: home(p)}, Value: pat, Regex: true, CaseSense: true}}
}

// texCompile: pdflatex (and bibtex, then pdflatex twice, when the task
// writes a .bib) succeeds on the file, in a copy of its folder.
func (c *converter) texCompile(where string, e map[string]any) []check.Spec {
	dir, file := str(e["path"]), str(e["file"])
	if dir == "" || file == "" || !nameRE.MatchString(file) {
		c.unsupported("%s: compile without a path or a plain file name", where)
		return nil
	}
	tex := "pdflatex -interaction=nonstopmode -halt-on-error " + file + ".tex >/dev/null"
	steps := []string{tex}
	for p := range c.touched {
		if strings.HasSuffix(p, ".bib") {
			steps = append(steps, "bibtex "+file+" >/dev/null", tex, tex)
			break
		}
	}
	q := shellQuote(dir)
	if strings.HasPrefix(dir, "/home/user") && !strings.ContainsAny(dir, "\"$`\\") {
		q = `"` + homeCommand(dir) + `"`
	}
	cmd := fmt.Sprintf(`d=$(mktemp -d) && cp -r %s/. "$d" && cd "$d" && %s`, q, strings.Join(steps, " && "))
	zero := 0
	return []check.Spec{{Kind: check.CommandKind, Name: "pdflatex compiles " + file + ".tex", Command: cmd, ExitCode: &zero}}
}

// leanCheck: the theorem's line is in the file, and lake build in the
// project succeeds without a sorry.
func (c *converter) leanCheck(where string) []check.Spec {
	if c.f.Type != "Lean" {
		c.unsupported("%s: placeholder outside a Lean task", where)
		return nil
	}
	var header string
	for _, st := range c.f.Initialize {
		if str(st["func"]) == "query" {
			header = leanHeader(str(st["expr"]))
		}
	}
	if header == "" || !strings.HasSuffix(header, " by") {
		c.unsupported("%s: a Lean task without a query ending in by sorry", where)
		return nil
	}
	cmd := fmt.Sprintf(`cd ~/sci && grep -qxF -e %s Sci/Basic.lean && out=$("${LAKE:-$HOME/.elan/bin/lake}" build) && ! printf '%%s' "$out" | grep -qF "declaration uses 'sorry'"`,
		shellQuote(header))
	zero := 0
	return []check.Spec{{Kind: check.CommandKind, Name: "lake build proves the theorem", Command: cmd, ExitCode: &zero, Timeout: duration.Duration(5 * time.Minute)}}
}
