// Package osworld reads OSWorld's task files (evaluation_examples/
// examples/DOMAIN/ID.json) and turns each into a Proctor task, or says
// why it cannot (package imports writes the suite).
//
// What converts:
//
//   - config steps: download (the files become assets, fetched by proctor
//     import --fetch), open, launch (LibreOffice, GIMP, VLC, Thunderbird,
//     a file manager, Chrome as Chromium; the debugging-port relay OSWorld
//     starts beside Chrome is its harness's and is left out), execute and
//     command (shell commands; pyautogui's hotkey and press as keys steps,
//     time.sleep as sleep), activate_window (focus), sleep, and
//     chrome_open_tabs (pages on the live web, which blocks the task);
//   - the evaluator's postconfig, the same kinds and close_window, as the
//     task's steps after the agent;
//   - the evaluator: infeasible, exact_match, check_include_exclude,
//     file_contains and compare_text_file over a file or a command's
//     output (vm_file, vm_command_line), and compare_table,
//     compare_docx_files and compare_pptx_files as document_equal checks
//     with the task's options; several functions joined by "and" are
//     several checks, joined by "or" one any check.
//     A converted check that does not compile (an option document_equal
//     does not know) leaves the task out, with the compiler's words;
//   - settings files (VS Code's, Chromium's profile, VLC's vlcrc, JSON
//     files, a SQLite database, a picture's size, a docx document's
//     single properties) as predicate checks (settings.go, writer.go),
//     and PDFs, archives and text compared in the desktop with its tools
//     as command checks (pdf.go, files.go).
//
// Everything else is named as not supported. The paths of OSWorld's
// user, /home/user, are the desktop's home, ~.
package osworld

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/internal/imagecmp"
	"github.com/proctor-eval/proctor/task"
)

// Peer is the benchmark's name in task origins.
const Peer = "osworld"

// File is an OSWorld task file.
type File struct {
	ID          string    `json:"id"`
	Snapshot    string    `json:"snapshot"`
	Instruction string    `json:"instruction"`
	Source      string    `json:"source"`
	Config      []Step    `json:"config"`
	RelatedApps []string  `json:"related_apps"`
	Evaluator   Evaluator `json:"evaluator"`
	Proxy       bool      `json:"proxy"`
}

// Step is a config or postconfig step.
type Step struct {
	Type       string         `json:"type"`
	Parameters map[string]any `json:"parameters"`
}

// Evaluator is how OSWorld decides a task: one metric function or
// several (Func a list, joined by Conj), each comparing a result with an
// expected value, both fetched by getters.
type Evaluator struct {
	Postconfig []Step          `json:"postconfig"`
	Func       json.RawMessage `json:"func"`
	Conj       string          `json:"conj"`
	Result     json.RawMessage `json:"result"`
	Expected   json.RawMessage `json:"expected"`
	Options    json.RawMessage `json:"options"`
}

// Getter is a result or expected value's getter.
type Getter struct {
	Type     string         `json:"type"`
	Path     any            `json:"path"`
	Dest     any            `json:"dest"`
	Command  any            `json:"command"`
	Shell    any            `json:"shell"`
	Rules    map[string]any `json:"rules"`
	Multi    bool           `json:"multi"`
	FileName string         `json:"file_name"`
	Gives    []int          `json:"gives"`
}

// given is the getter of the one file a multi getter hands its metric
// (gives, by default the first); the others are only fetched beside it,
// for OSWorld's own readers. A getter handing over several is not
// supported.
func given(g *Getter) (*Getter, string) {
	if g == nil || !g.Multi {
		return g, ""
	}
	gives := g.Gives
	if len(gives) == 0 {
		gives = []int{0}
	}
	if len(gives) != 1 {
		return nil, fmt.Sprintf("%s giving %d files", g.Type, len(gives))
	}
	paths, _ := g.Path.([]any)
	dests, _ := g.Dest.([]any)
	i := gives[0]
	if i < 0 || i >= len(paths) || i >= len(dests) {
		return nil, fmt.Sprintf("%s giving file %d of %d", g.Type, i, len(paths))
	}
	one := *g
	one.Path, one.Dest, one.Multi, one.Gives = paths[i], dests[i], false, nil
	return &one, ""
}

// idRE is what an imported task's id may be.
var idRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)

// Parse reads a task file; a file that is not one is an error.
func Parse(b []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.ID == "" || f.Instruction == "" {
		return nil, fmt.Errorf("not an OSWorld task: it has no id or instruction")
	}
	// The id names the task's file and its assets' folder in the suite
	// written: a path in it could write outside the suite.
	if !idRE.MatchString(f.ID) {
		return nil, fmt.Errorf("id %q is not a plain name (letters, digits, '.', '_', '-')", f.ID)
	}
	if len(f.Evaluator.Func) == 0 {
		return nil, fmt.Errorf("not an OSWorld task: its evaluator has no func")
	}
	return &f, nil
}

// funcs are the evaluator's metric functions.
func (e Evaluator) funcs() ([]string, error) {
	var one string
	if json.Unmarshal(e.Func, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(e.Func, &many); err != nil {
		return nil, fmt.Errorf("func: %v", err)
	}
	return many, nil
}

// perFunc reads an evaluator field that is one value for every function
// or a list of one per function (what each names a getter or options);
// absent, every function has the zero value.
func perFunc[T any](raw json.RawMessage, n int, what string) ([]T, error) {
	out := make([]T, n)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	if raw[0] == '[' {
		var each []T
		if err := json.Unmarshal(raw, &each); err != nil {
			return nil, err
		}
		if len(each) != n {
			return nil, fmt.Errorf("%d %s for %d functions", len(each), what, n)
		}
		return each, nil
	}
	var one T
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = one
	}
	return out, nil
}

// Import turns a parsed task file (its path within the benchmark's
// folder, its bytes' hash and the benchmark's revision given) into an
// imported task.
func Import(f *File, group, file, hash, revision string) *imports.Task {
	it := &imports.Task{ID: f.ID, Group: group}
	c := &converter{it: it, f: f}
	t := &task.Task{
		ID:          f.ID,
		Instruction: f.Instruction,
		Domain:      group,
		Level:       task.Level("bronze"),
		Kind:        task.StateTask,
		Environment: task.Environment{Type: "x11", Resolution: "1920x1080"},
		Tags:        []string{Peer, group},
		Origin:      &task.Origin{Peer: Peer, File: file, ID: f.ID, Revision: revision, SHA256: hash},
	}
	c.t = t
	if app := c.app(group, f.RelatedApps); app != "" {
		t.App = app
	}
	// OSWorld's user's home holds the usual folders, which its tasks
	// write into without making them.
	t.Setup = append(t.Setup, task.Step{Run: &task.Run{Command: homeFolders}})
	for i, st := range f.Config {
		t.Setup = append(t.Setup, c.step(fmt.Sprintf("config[%d]", i), st, false)...)
	}
	for i, st := range f.Evaluator.Postconfig {
		t.After = append(t.After, c.step(fmt.Sprintf("postconfig[%d]", i), st, true)...)
	}
	c.evaluator()
	if t.Kind == task.InfeasibleTask {
		t.Gold = []action.Action{{Kind: action.Fail}}
	} else {
		t.Unproven = "OSWorld ships no solution of this task"
	}
	if err := applyOverride(t); err != nil {
		it.Block(imports.NotSupported, "%v", err)
	}
	if f.Proxy {
		it.Block(imports.LiveWeb, "the task runs behind OSWorld's proxy to websites")
	}
	if u := webAddress(f.Instruction); u != "" {
		// The agent is told to fetch it: offline, it cannot.
		it.Block(imports.LiveWeb, "the instruction names %s", u)
	}
	if readsGSettings(t) {
		// GNOME's settings kept between processes, in dconf, as on
		// OSWorld's Ubuntu desktop.
		t.Environment.Session = task.SessionGNOME
	}
	it.Task = t
	return it
}

// converter holds one task's conversion.
type converter struct {
	it *imports.Task
	f  *File
	t  *task.Task
	// outputs are the commands of the steps after the agent whose
	// output OSWorld keeps in its cache folder, by the file's name: a
	// cache_file getter of that name reads the command's output.
	outputs map[string]string
}

func (c *converter) unsupported(format string, args ...any) {
	c.it.Block(imports.NotSupported, format, args...)
}

// apps maps OSWorld's domains and related apps to Proctor's apps.
var apps = map[string]string{
	"libreoffice_calc": "libreoffice-calc", "libreoffice calc": "libreoffice-calc",
	"libreoffice_writer": "libreoffice-writer", "libreoffice writer": "libreoffice-writer",
	"libreoffice_impress": "libreoffice-impress", "libreoffice impress": "libreoffice-impress",
	"gimp": "gimp", "vlc": "vlc", "thunderbird": "thunderbird", "chrome": "chromium",
	"os": "bash",
}

// app is the task's application: its domain's, or its one related app's.
func (c *converter) app(group string, related []string) string {
	if a, ok := apps[group]; ok {
		return a
	}
	if len(related) == 1 {
		return apps[strings.ToLower(related[0])]
	}
	return ""
}

// home turns OSWorld's user's paths into the desktop's home; a relative
// path is the user's home's (the folder OSWorld's commands run in).
func home(p string) string {
	switch {
	case p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~"):
		return "~/" + p
	case p == "/home/user":
		return "~"
	case strings.HasPrefix(p, "/home/user/"):
		return "~/" + strings.TrimPrefix(p, "/home/user/")
	}
	return p
}

// homeCommand does the same in a shell command, and leaves out the
// session bus of OSWorld's user (DBUS_SESSION_BUS_ADDRESS set to
// /run/user/1000/bus): commands run with the desktop's own.
func homeCommand(s string) string {
	s = busExport.ReplaceAllStringFunc(s, func(m string) string {
		// The separator before the export stays, with one space.
		if sep := busExport.FindStringSubmatch(m)[1]; sep != "" {
			return sep + " "
		}
		return ""
	})
	s = busPrefix.ReplaceAllString(s, "$1")
	return strings.ReplaceAll(s, "/home/user", "$HOME")
}

// busExport is an export of OSWorld's session bus address as a command
// of its own (at a line's start or after ; or &&, ended by a newline, ;,
// && or the end), and busPrefix the variable set before one command.
var (
	busExport = regexp.MustCompile(`(?m)(^|;|&&)[ \t]*export DBUS_SESSION_BUS_ADDRESS=` + busValue + `[ \t]*(\n|;|&&|$)[ \t]*`)
	busPrefix = regexp.MustCompile(`(^|[\s;&|(])DBUS_SESSION_BUS_ADDRESS=` + busValue + `[ \t]+`)
)

// busValue is a shell word: quoted, or up to a blank, ; or &.
const busValue = `('[^']*'|"[^"]*"|[^\s;&]+)`

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// command is a step's command as one shell line: a list is quoted
// word by word, a string taken as it is.
func command(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, x != ""
	case []any:
		var words []string
		for _, w := range x {
			s, ok := w.(string)
			if !ok {
				return "", false
			}
			words = append(words, shellQuote(s))
		}
		return strings.Join(words, " "), len(words) > 0
	}
	return "", false
}

// words is a list command's words, unquoted.
func words(v any) []string {
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		var out []string
		for _, w := range x {
			if s, ok := w.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// step converts one config or postconfig step.
func (c *converter) step(where string, st Step, after bool) []task.Step {
	p := st.Parameters
	switch st.Type {
	case "sleep":
		secs, _ := p["seconds"].(float64)
		if secs <= 0 {
			return nil
		}
		d := duration.Duration(secs * 1e9)
		return []task.Step{{Sleep: &d}}
	case "download":
		files, _ := p["files"].([]any)
		var out []task.Step
		for _, x := range files {
			m, _ := x.(map[string]any)
			url, dest := str(m["url"]), home(str(m["path"]))
			if url == "" || dest == "" {
				c.unsupported("%s: a download without url or path", where)
				continue
			}
			asset := path.Join(Peer, c.f.ID, path.Base(dest))
			c.fetch(url, asset)
			out = append(out, task.Step{Copy: &task.Copy{Asset: asset, To: dest}})
		}
		return out
	case "open":
		return []task.Step{{Open: &task.Open{Path: home(str(p["path"]))}}}
	case "launch":
		return c.launch(where, p)
	case "execute", "command":
		return c.execute(where, p)
	case "activate_window":
		name := str(p["window_name"])
		if name == "" {
			c.unsupported("%s: activate_window without a window_name", where)
			return nil
		}
		if strings.EqualFold(name, "terminal") {
			name = terminalWindow
		}
		return []task.Step{{Focus: &task.Focus{Title: name}}}
	case "close_window":
		name := str(p["window_name"])
		if name == "" {
			c.unsupported("%s: close_window without a window_name", where)
			return nil
		}
		return []task.Step{{Close: &task.Close{Title: name}}}
	case "chrome_open_tabs":
		urls, _ := p["urls_to_open"].([]any)
		var out []task.Step
		for _, u := range urls {
			c.it.Block(imports.LiveWeb, "%s opens %s", where, str(u))
			out = append(out, task.Step{Open: &task.Open{URL: str(u), App: "chromium"}})
		}
		return out
	case "googledrive", "login":
		c.it.Block(imports.Account, "%s: %s signs in to a Google account", where, st.Type)
		return nil
	}
	c.unsupported("%s: %s steps", where, st.Type)
	return nil
}

// fetch records a file the task needs from the web.
func (c *converter) fetch(url, asset string) {
	for _, f := range c.t.Origin.Fetch {
		if f.Asset == asset {
			return
		}
	}
	c.t.Origin.Fetch = append(c.t.Origin.Fetch, task.OriginFile{URL: url, Asset: asset})
}

// launchers are the programs OSWorld launches (or kills), as Proctor's
// apps.
var launchers = map[string]string{
	"google-chrome": "chromium", "chrome": "chromium", "thunderbird": "thunderbird", "/usr/bin/thunderbird": "thunderbird",
	"vlc": "vlc", "gimp": "gimp", "nautilus": "nautilus",
}

func (c *converter) launch(where string, p map[string]any) []task.Step {
	ws := words(p["command"])
	// VLC_VERBOSE=-1 vlc ...: the environment's assignments go.
	for len(ws) > 0 && strings.Contains(ws[0], "=") && !strings.HasPrefix(ws[0], "-") {
		ws = ws[1:]
	}
	if len(ws) == 0 {
		c.unsupported("%s: a launch without a command", where)
		return nil
	}
	prog, args := ws[0], ws[1:]
	switch prog {
	case "socat":
		return nil // the relay to Chrome's debugging port: OSWorld's harness, not the task
	case "code":
		c.it.Block(imports.AppMissing, "%s: VS Code is not in Debian", where)
		return nil
	case "pkill", "killall":
		// pkill chrome, pkill vlc: the application's windows of this
		// desktop closed (as the signal would, it saves its settings),
		// killed if they outlive ten seconds. A pattern run as it is
		// would end other desktops' processes too (pkill chrome matches
		// every Chromium's crash handler on the machine).
		if len(args) == 1 {
			if spec := task.BuiltinApps[launchers[args[0]]]; spec.Window != "" {
				return []task.Step{{Close: &task.Close{Title: spec.Window, Timeout: duration.Duration(10 * time.Second), Kill: true}}}
			}
		}
		cmd, _ := command(p["command"])
		return []task.Step{{Run: &task.Run{Command: cmd}}}
	case "libreoffice", "soffice":
		app := "libreoffice-writer"
		var rest []string
		for _, a := range args {
			switch a {
			case "--calc":
				app = "libreoffice-calc"
			case "--writer":
				app = "libreoffice-writer"
			case "--impress":
				app = "libreoffice-impress"
			default:
				rest = append(rest, launchArg(a))
			}
		}
		return []task.Step{launchStep(app, rest)}
	}
	app, ok := launchers[prog]
	if !ok {
		c.unsupported("%s: launches %s, an application Proctor does not know", where, prog)
		return nil
	}
	var rest []string
	for _, a := range args {
		if strings.HasPrefix(a, "--remote-debugging-port") {
			continue
		}
		rest = append(rest, launchArg(a))
	}
	return []task.Step{launchStep(app, rest)}
}

// launchStep launches a built-in app and waits, at most a minute, for its
// window (its title holds the app's window name), so that the agent's
// first screen, and a solution's first key, find the application there.
func launchStep(app string, args []string) task.Step {
	l := &task.Launch{App: app, Args: args}
	if spec, ok := task.BuiltinApps[app]; ok && spec.Window != "" {
		l.WaitWindow, l.Timeout = spec.Window, duration.Duration(time.Minute)
	}
	return task.Step{Launch: l}
}

// launchArg is a launched program's argument: an option (-x, --x) as it
// is, anything else a path of the home.
func launchArg(a string) string {
	if strings.HasPrefix(a, "-") {
		return a
	}
	return home(a)
}

var (
	pyHotkey = regexp.MustCompile(`pyautogui\.hotkey\(\s*\[?([^)\]]*)\]?\s*\)`)
	pyPress  = regexp.MustCompile(`pyautogui\.press\(\s*\[?([^)\]]*)\]?\s*\)`)
	pySleep  = regexp.MustCompile(`time\.sleep\(\s*([0-9.]+)\s*\)`)
	pyCall   = regexp.MustCompile(`pyautogui\.(\w+)\(`)
	pyClick  = regexp.MustCompile(`pyautogui\.click\(\s*([^,()]+)\s*,\s*([^,()]+)\s*\)`)
	pyWrite  = regexp.MustCompile(`pyautogui\.(?:write|typewrite)\(\s*(?:"([^"]*)"|'([^']*)')\s*\)`)
	pyString = regexp.MustCompile(`["']([^"']+)["']`)
)

// execute converts a shell command, or a Python one-liner of pyautogui
// key presses and sleeps.
func (c *converter) execute(where string, p map[string]any) []task.Step {
	ws := words(p["command"])
	if len(ws) >= 3 && (ws[0] == "python" || ws[0] == "python3") && ws[1] == "-c" && strings.Contains(ws[2], "pyautogui") {
		return c.pyautogui(where, ws[2])
	}
	cmd, ok := command(p["command"])
	if !ok {
		c.unsupported("%s: a command that is neither a string nor a list of strings", where)
		return nil
	}
	// OSWorld's user is not root and types its password to sudo; the
	// desktop's user here is root, and runs the command itself.
	cmd = strings.TrimPrefix(cmd, sudoPrefix)
	// OSWorld's python is Python 3, which Debian names python3 alone.
	if rest, ok := strings.CutPrefix(cmd, "python "); ok {
		cmd = "python3 " + rest
	}
	if strings.Contains(cmd, "{CLIENT_PASSWORD}") || cmd == "su" || strings.HasPrefix(cmd, "su ") {
		c.unsupported("%s: a command that signs in as another user (%s)", where, cmd)
		return nil
	}
	if out, _ := p["stdout"].(string); out != "" {
		if c.outputs == nil {
			c.outputs = map[string]string{}
		}
		c.outputs[out] = homeCommand(cmd)
	}
	return []task.Step{{Run: &task.Run{Command: homeCommand(cmd)}}}
}

// homeFolders makes the folders of OSWorld's user's home.
const homeFolders = "mkdir -p ~/Desktop ~/Documents ~/Downloads ~/Music ~/Pictures ~/Videos ~/Templates ~/Public"

// sudoPrefix is how OSWorld's commands gain root.
const sudoPrefix = "echo {CLIENT_PASSWORD} | sudo -S "

// terminalKeys open a terminal on OSWorld's GNOME desktop; the desktop
// here binds no keys to it, so an import launches the built-in terminal
// application (bash, in xterm) instead, and a window OSWorld calls
// Terminal is that one.
const (
	terminalKeys   = "ctrl+alt+t"
	terminalWindow = "bash"
)

// pyautogui converts a pyautogui one-liner of hotkeys, presses and
// sleeps, in order; anything else it calls is not supported.
func (c *converter) pyautogui(where, src string) []task.Step {
	type hit struct {
		at   int
		step task.Step
	}
	var hits []hit
	for _, m := range pyCall.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		if name != "hotkey" && name != "press" && name != "click" && name != "write" && name != "typewrite" {
			c.unsupported("%s: pyautogui.%s", where, name)
			return nil
		}
	}
	for _, m := range pyHotkey.FindAllStringSubmatchIndex(src, -1) {
		var keys []string
		for _, k := range pyString.FindAllStringSubmatch(src[m[2]:m[3]], -1) {
			keys = append(keys, k[1])
		}
		combo := strings.Join(keys, "+")
		if _, err := action.Combo(combo); err != nil || len(keys) == 0 {
			c.unsupported("%s: pyautogui.hotkey(%s)", where, src[m[2]:m[3]])
			return nil
		}
		step := task.Step{Keys: &combo}
		if strings.EqualFold(combo, terminalKeys) {
			step = task.Step{Launch: &task.Launch{App: "bash", WaitWindow: terminalWindow}}
		}
		hits = append(hits, hit{m[0], step})
	}
	for _, m := range pyPress.FindAllStringSubmatchIndex(src, -1) {
		at := m[0]
		for _, k := range pyString.FindAllStringSubmatch(src[m[2]:m[3]], -1) {
			key := k[1]
			if _, err := action.Combo(key); err != nil {
				c.unsupported("%s: pyautogui.press(%q)", where, key)
				return nil
			}
			hits = append(hits, hit{at, task.Step{Keys: &key}})
			at++
		}
	}
	for _, m := range pyClick.FindAllStringSubmatchIndex(src, -1) {
		x, okx := coordinate(src[m[2]:m[3]])
		y, oky := coordinate(src[m[4]:m[5]])
		if !okx || !oky {
			c.unsupported("%s: pyautogui.click(%s, %s)", where, src[m[2]:m[3]], src[m[4]:m[5]])
			return nil
		}
		hits = append(hits, hit{m[0], task.Step{Click: &action.Point{X: x, Y: y}}})
	}
	for _, m := range pyWrite.FindAllStringSubmatchIndex(src, -1) {
		text := ""
		if m[2] >= 0 {
			text = src[m[2]:m[3]]
		} else {
			text = src[m[4]:m[5]]
		}
		if text != "" {
			hits = append(hits, hit{m[0], task.Step{Type: &text}})
		}
	}
	for _, m := range pySleep.FindAllStringSubmatchIndex(src, -1) {
		secs, _ := strconv.ParseFloat(src[m[2]:m[3]], 64)
		if secs > 0 {
			d := duration.Duration(secs * 1e9)
			hits = append(hits, hit{m[0], task.Step{Sleep: &d}})
		}
	}
	// In the order the one-liner runs them.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	out := make([]task.Step, len(hits))
	for i, h := range hits {
		out[i] = h.step
	}
	return out
}

// screen is OSWorld's screen, whose halves its placeholders name.
const screenW, screenH = 1920, 1080

// coordinate reads a click's coordinate: a number or one of OSWorld's
// placeholders of the screen's halves.
func coordinate(s string) (float64, bool) {
	switch strings.TrimSpace(s) {
	case "{SCREEN_WIDTH_HALF}":
		return screenW / 2, true
	case "{SCREEN_HEIGHT_HALF}":
		return screenH / 2, true
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && v >= 0
}

// evaluator converts the evaluator into checks.
func (c *converter) evaluator() {
	e := c.f.Evaluator
	fs, err := e.funcs()
	if err != nil {
		c.unsupported("evaluator %v", err)
		return
	}
	if len(fs) == 1 && fs[0] == "infeasible" {
		c.t.Kind = task.InfeasibleTask
		c.t.Checks = []check.Spec{{Kind: check.Infeasible}}
		return
	}
	results, err := perFunc[*Getter](e.Result, len(fs), "getters")
	if err != nil {
		c.unsupported("evaluator result: %v", err)
		return
	}
	expected, err := perFunc[*Getter](e.Expected, len(fs), "getters")
	if err != nil {
		c.unsupported("evaluator expected: %v", err)
		return
	}
	opts, err := perFunc[map[string]any](e.Options, len(fs), "options")
	if err != nil {
		c.unsupported("evaluator options: %v", err)
		return
	}
	or := len(fs) > 1 && e.Conj == "or"
	var alts []check.Spec
	for i, fn := range fs {
		conv, ok := metrics[fn]
		if !ok {
			c.unsupported("evaluator %s", fn)
			continue
		}
		result, why := given(results[i])
		exp, whyExp := given(expected[i])
		if why == "" {
			why = whyExp
		}
		var specs []check.Spec
		if why == "" {
			specs, why = conv(c, result, exp, opts[i])
		}
		if why == "" {
			if _, err := check.CompileAll(specs, nil); err != nil {
				why = err.Error()
			}
		}
		if why == "" && or && len(specs) > 1 {
			var one check.Spec
			if one, why = allOfOneProbe(specs); why == "" {
				specs = []check.Spec{one}
			}
		}
		if why != "" {
			c.unsupported("evaluator %s: %s", fn, why)
			continue
		}
		if or {
			alts = append(alts, specs[0])
			continue
		}
		c.t.Checks = append(c.t.Checks, specs...)
	}
	if or && len(alts) == len(fs) {
		c.t.Checks = append(c.t.Checks, check.Spec{Kind: check.AnyOf, Any: alts})
	}
}

// allOfOneProbe is one alternative of an or that needs several checks of
// one probe's text (check_include_exclude's strings) as one predicate
// check that every one of them passes.
func allOfOneProbe(specs []check.Spec) (check.Spec, string) {
	why := fmt.Sprintf("%d checks for one alternative of an or", len(specs))
	p := specs[0].Probe
	var terms []string
	for _, s := range specs {
		if s.Probe == nil || p == nil || *s.Probe != *p || !s.CaseSense || s.Regex {
			return check.Spec{}, why
		}
		switch s.Kind {
		case check.Contains:
			terms = append(terms, "(text contains "+exprString(s.Value)+")")
		case check.NotContains:
			terms = append(terms, "!(text contains "+exprString(s.Value)+")")
		default:
			return check.Spec{}, why
		}
	}
	return predicate(p, strings.Join(terms, " && ")), ""
}

// webAddress is the first address on the web (http or https, not this
// machine's) that an instruction names, else "".
func webAddress(instruction string) string {
	for _, m := range webURL.FindAllString(instruction, -1) {
		u, err := url.Parse(strings.TrimRight(m, ".,;:)\"'"))
		if err != nil || u.Hostname() == "" {
			continue
		}
		switch h := u.Hostname(); {
		case h == "localhost", strings.HasPrefix(h, "127."), h == "::1":
			continue
		}
		return u.String()
	}
	return ""
}

var webURL = regexp.MustCompile(`https?://[^\s"'<>]+`)

// metric converts one metric function with its getters and options into
// checks, or says why it cannot.
type metric func(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string)

// metrics are the functions that convert.
var metrics = map[string]metric{
	"exact_match":             exactMatch,
	"check_include_exclude":   includeExclude,
	"file_contains":           fileContains,
	"compare_csv":             compareCSV,
	"check_list":              checkList,
	"check_config_status":     configStatus,
	"check_thunderbird_prefs": thunderbirdPrefs,
	"compare_table":           documentEqual("xlsx"),
	"compare_docx_files":      documentEqual("docx"),
	"compare_pptx_files":      documentEqual("pptx"),
}

// documentEqual: an office document of the desktop compares with the
// expected one (a file to fetch) by the peer's options, which
// document_equal takes by the same names (its compile refuses the ones it
// does not know, named). Keys beginning with an underscore are the task
// file's comments.
func documentEqual(mode string) metric {
	return func(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
		if result == nil || result.Type != "vm_file" {
			return nil, "a result that is not a file"
		}
		file := home(str(result.Path))
		if file == "" {
			return nil, "a vm_file without a path"
		}
		s := check.Spec{Kind: check.DocumentEqual, File: file, Mode: mode}
		for k, v := range opts {
			if strings.HasPrefix(k, "_") {
				continue
			}
			if s.Options == nil {
				s.Options = map[string]any{}
			}
			s.Options[k] = v
		}
		switch {
		case expected == nil:
		case expected.Type == "cloud_file":
			asset, why := c.expectedFile(expected)
			if why != "" {
				return nil, why
			}
			s.Asset = asset
		default:
			return nil, fmt.Sprintf("expected %s", expected.Type)
		}
		return []check.Spec{s}, ""
	}
}

// probe is the check probe of a result getter: a file of the desktop or
// a command's output.
func (c *converter) probe(g *Getter) (*check.Probe, string) {
	if g == nil {
		return nil, "no result"
	}
	switch g.Type {
	case "vm_file":
		p := home(str(g.Path))
		if p == "" {
			return nil, "vm_file without a path"
		}
		return &check.Probe{File: p}, ""
	case "vm_command_line":
		cmd, ok := command(g.Command)
		if s, isStr := g.Command.(string); isStr {
			cmd, ok = s, s != ""
		}
		if !ok {
			return nil, "vm_command_line without a command"
		}
		return &check.Probe{Command: homeCommand(cmd)}, ""
	case "cache_file":
		cmd, ok := c.outputs[str(g.Path)]
		if !ok {
			return nil, "a cache_file no step after the agent writes"
		}
		return &check.Probe{Command: cmd}, ""
	}
	return nil, fmt.Sprintf("result %s", g.Type)
}

// rule is an expected getter's rule.
func rule(g *Getter, key string) (any, string) {
	if g == nil || g.Type != "rule" {
		t := "none"
		if g != nil {
			t = g.Type
		}
		return nil, fmt.Sprintf("expected %s", t)
	}
	v, ok := g.Rules[key]
	if !ok {
		return nil, fmt.Sprintf("a rule without %s", key)
	}
	return v, ""
}

// exactMatch: the result equals the rule's expected string. A command's
// output is compared without its final newline, as Proctor's probes
// read it.
func exactMatch(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if p, x, ok := chromeValue(result); ok {
		return exactChrome(p, x, expected)
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	want, why := rule(expected, "expected")
	if why != "" {
		return nil, why
	}
	s, ok := want.(string)
	if !ok {
		return nil, "an expected value that is not a string"
	}
	return []check.Spec{{Kind: check.Exact, Probe: p, Expected: strings.TrimRight(s, "\n"), As: "string", CaseSense: true}}, ""
}

// includeExclude: the result holds every include string and no exclude
// string.
func includeExclude(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	return listChecks(c, result, expected, opts, "include", "exclude", func(v string) (string, bool) { return v, false })
}

// expectedFile is the asset of an expected file to fetch (a cloud_file),
// named for the fetch.
func (c *converter) expectedFile(expected *Getter) (string, string) {
	if expected == nil || expected.Type != "cloud_file" {
		return "", "an expected value that is not a file to fetch"
	}
	url, dest := str(expected.Path), str(expected.Dest)
	if url == "" || dest == "" {
		return "", "a cloud_file without path or dest"
	}
	asset := path.Join(Peer, c.f.ID, "expected", path.Base(dest))
	c.fetch(url, asset)
	return asset, ""
}

// fileContains: the file holds every expected string.
func fileContains(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file"
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	want, why := rule(expected, "expected")
	if why != "" {
		return nil, why
	}
	list, ok := want.([]any)
	if !ok {
		return nil, "expected that is not a list"
	}
	var out []check.Spec
	for _, v := range list {
		out = append(out, check.Spec{Kind: check.Contains, Probe: p, Value: str(v), CaseSense: true})
	}
	return out, ""
}

// compareCSV: the file's lines equal the expected file's (a file to
// fetch), line endings aside, as OSWorld's strict default compares them;
// its strict: false and ignore_case are not supported.
func compareCSV(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	for k, v := range opts {
		if k == "strict" && v == true {
			continue
		}
		return nil, "option " + k
	}
	return compareTextFile(c, result, expected, nil)
}

// imageMetric: an image of the desktop compares with the expected image
// (a file to fetch) by OSWorld's metric of the same name, a
// document_equal check of mode image (package imagecmp says how each
// metric reads). compare_images scores the SSIM itself: the check passes
// from 0.9, the least similarity OSWorld's structure checks accept.
func imageMetric(name string) metric {
	return func(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
		if result == nil || result.Type != "vm_file" {
			return nil, "a result that is not a file of the desktop"
		}
		file := home(str(result.Path))
		if file == "" {
			return nil, "a vm_file without a path"
		}
		asset, why := c.expectedFile(expected)
		if why != "" {
			return nil, why
		}
		s := check.Spec{Kind: check.DocumentEqual, File: file, Mode: "image", Asset: asset, Options: map[string]any{"metric": name}}
		for k, v := range opts {
			if !strings.HasPrefix(k, "_") {
				s.Options[k] = v
			}
		}
		if imagecmp.Scored(name) {
			least := 0.9
			s.MinScore = &least
		}
		return []check.Spec{s}, ""
	}
}

func init() {
	for _, name := range imagecmp.Metrics() {
		metrics[name] = imageMetric(name)
	}
}

// checkList: every expect pattern matches a line of the result, and no
// unexpect pattern any (Python regular expressions, read as Go's: a
// pattern Go's syntax refuses, a lookahead say, leaves the task out).
func checkList(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	return listChecks(c, result, expected, opts, "expect", "unexpect", func(v string) (string, bool) { return "(?m)" + v, true })
}

// listChecks reads a rule's two lists of strings, those the result must
// hold (contains) and those it must not (not_contains), each made a
// check's value and told a regular expression or not by value.
func listChecks(c *converter, result, expected *Getter, opts map[string]any, must, mustNot string, value func(string) (string, bool)) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	if expected == nil || expected.Type != "rule" {
		return nil, "expected that is not a rule"
	}
	var out []check.Spec
	for _, key := range []string{must, mustNot} {
		list, _ := expected.Rules[key].([]any)
		for _, item := range list {
			s := str(item)
			if s == "" {
				continue
			}
			kind := check.Contains
			if key == mustNot {
				kind = check.NotContains
			}
			v, regex := value(s)
			out = append(out, check.Spec{Kind: kind, Probe: p, Value: v, Regex: regex, CaseSense: true})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("no %s or %s strings", must, mustNot)
	}
	return out, ""
}

// configStatus: a line of GIMP's configuration file (gimprc, in GIMP
// 2.10's folder as Debian's GIMP keeps it) sets the key, or the two words
// of a key list, to the value as its last word.
func configStatus(_ *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "gimp_config_file" || result.FileName == "" || strings.ContainsAny(result.FileName, "/\\") {
		return nil, "a result that is not a file of GIMP's configuration"
	}
	if expected == nil || expected.Type != "rule" {
		return nil, "expected that is not a rule"
	}
	value, ok := expected.Rules["value"].(string)
	if !ok {
		return nil, "a rule without a value"
	}
	var key string
	switch k := expected.Rules["key"].(type) {
	case string:
		key = regexp.QuoteMeta(k)
	case []any:
		if len(k) != 2 {
			return nil, "a key list that is not two words"
		}
		key = regexp.QuoteMeta(str(k[0])) + `\s+` + regexp.QuoteMeta(str(k[1]))
	default:
		return nil, "a rule without a key"
	}
	re := `(?m)^\s*\(*` + key + `(?:\s+.*)?\s+` + regexp.QuoteMeta(value) + `\)*\s*$`
	return []check.Spec{{Kind: check.Contains, Probe: &check.Probe{File: "~/.config/GIMP/2.10/" + result.FileName}, Value: re, Regex: true, CaseSense: true}}, ""
}

// thunderbirdPrefs: Thunderbird's prefs.js sets each expected preference
// to its value (eq: the value as the file writes it, JSON; re, with
// re's flags: a pattern found in the string the last line of the
// preference sets, decoded, as OSWorld decodes it) and no unexpected one
// to its value. Other methods are not supported.
func thunderbirdPrefs(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file"
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	if expected == nil || expected.Type != "rule" {
		return nil, "expected that is not a rule"
	}
	var out []check.Spec
	for _, section := range []string{"expect", "unexpect"} {
		prefs, _ := expected.Rules[section].(map[string]any)
		keys := make([]string, 0, len(prefs))
		for k := range prefs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			r, _ := prefs[k].(map[string]any)
			key, _ := json.Marshal(k)
			method := str(r["method"])
			if method == "re" || strings.HasPrefix(method, "re.") {
				re, why := pythonPattern(str(r["ref"]), strings.Split(method, ".")[1:])
				if why != "" {
					return nil, fmt.Sprintf("preference %s: %s", k, why)
				}
				out = append(out, predicate(p, prefMatches(string(key), re, section == "unexpect")))
				continue
			}
			if method != "eq" {
				return nil, fmt.Sprintf("preference %s: method %v", k, r["method"])
			}
			b, err := json.Marshal(r["ref"])
			if err != nil {
				return nil, fmt.Sprintf("preference %s: %v", k, err)
			}
			kind := check.Contains
			if section == "unexpect" {
				kind = check.NotContains
			}
			out = append(out, check.Spec{Kind: kind, Probe: p, Value: `(?m)^user_pref\(` + regexp.QuoteMeta(string(key)) + `, ` + regexp.QuoteMeta(string(b)) + `\);$`, Regex: true, CaseSense: true})
		}
	}
	if len(out) == 0 {
		return nil, "no preferences"
	}
	return out, ""
}

// prefMatches is the expression that the last line of prefs.js setting
// the preference (key as the file writes it, quoted) sets it to a string
// the pattern is found in; unexpected, that no line sets it, or the
// last sets it to a value the pattern is not found in.
func prefMatches(key, re string, unexpected bool) string {
	prefix := "user_pref(" + key + ", "
	lines := `filter(split(text, "\n"), trim(#) startsWith ` + exprString(prefix) + ` && trim(#) endsWith ");")`
	found := `(let v = fromJSON(trimSuffix(trimPrefix(trim(last(ls)), ` + exprString(prefix) + `), ");")); type(v) == "string" && v matches ` + exprString(re) + `)`
	if unexpected {
		return "let ls = " + lines + "; len(ls) == 0 || !" + found
	}
	return "let ls = " + lines + "; len(ls) > 0 && " + found
}

// readsGSettings reports whether a step or a check of the task runs
// gsettings.
func readsGSettings(t *task.Task) bool {
	found := false
	for _, sec := range t.Sections() {
		for _, st := range sec.Steps {
			if st.Run != nil && strings.Contains(st.Run.Command, "gsettings") {
				found = true
			}
		}
	}
	check.Each(nil, t.Checks, func(_ []any, s check.Spec) {
		if s.Probe != nil && strings.Contains(s.Probe.Command, "gsettings") {
			found = true
		}
	})
	return found
}
