// Package osuniverse reads OSUniverse's test cases (testcases/GROUP/
// NAME.yaml) and turns each into a Proctor task, or says why it cannot
// (package imports writes the suite).
//
// An OSUniverse test case runs on an Alpine desktop with XFCE (the
// webtop image, whose user's home is /config): a shell line sets it up
// and checks judged by a model decide it. What converts:
//
//   - setup_cmd, split at && and &: `sudo apk add` (the Debian packages of
//     the same programs, in suite.yaml's setup), `cd` (a folder under
//     /config, the desktop's home), `wget` of a file (an asset fetched by
//     proctor import --fetch, copied into the folder), `setsid` of
//     LibreOffice with a file (the LibreOffice app of the file's type),
//     xfce4-terminal or Firefox with a page (Chromium, on the live web),
//     and `sleep`;
//   - the checks, whose four types are the evidence of Proctor's judge
//     checks of the same names (returned_result, final_screenshot,
//     command_output, expected_flow), the value their expectation. A
//     returned_result whose value is one literal (a word, a number, a
//     quoted title) becomes an answer check instead, and that answer is
//     the task's gold; the others have none (unproven).
//
// A task is blocked, not left out, where this machine's desktop cannot
// run it as it is: the live web (a browser task, a page or a download
// the instruction names, a package to install), Alpine's apk, and XFCE's
// own menus, panel, icons and settings (a task that names them runs in an
// XFCE session).
package osuniverse

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/imports"
	"github.com/proctor-eval/proctor/task"
)

// Peer is the benchmark's name in task origins.
const Peer = "osuniverse"

// File is an OSUniverse test case.
type File struct {
	Name         string  `yaml:"name"`
	Level        string  `yaml:"level"`
	Task         string  `yaml:"task"`
	SetupCmd     string  `yaml:"setup_cmd"`
	DesktopImage string  `yaml:"desktop_image"`
	Checks       []Check `yaml:"checks"`
}

// Check is one of a test case's checks: a model judges whether value
// holds of the evidence type names.
type Check struct {
	Type    string `yaml:"type"`
	Value   string `yaml:"value"`
	Command string `yaml:"command"`
}

// Parse reads a test case; a file that is not one is an error.
func Parse(b []byte) (*File, error) {
	var f File
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if strings.TrimSpace(f.Task) == "" {
		return nil, fmt.Errorf("not an OSUniverse test case: it has no task")
	}
	if len(f.Checks) == 0 {
		return nil, fmt.Errorf("not an OSUniverse test case: it has no checks")
	}
	return &f, nil
}

// nameRE is what a test case's file name may be: it names the task's
// file in the suite written.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// home is the webtop image's user's home, the desktop's home here.
const home = "/config"

// homePath turns a path under the webtop's home into the desktop's home.
func homePath(p string) string {
	switch {
	case p == home:
		return "~"
	case strings.HasPrefix(p, home+"/"):
		return "~/" + strings.TrimPrefix(p, home+"/")
	}
	return p
}

// homeCommand does the same in a shell command.
func homeCommand(s string) string {
	return regexp.MustCompile(`(^|[\s'"=:])/config\b`).ReplaceAllString(s, "${1}$$HOME")
}

// Import turns a parsed test case (its group, the folder it is in, its
// name, its path within the checkout, its bytes' hash and the checkout's
// revision given) into an imported task, with the Debian packages its
// setup adds.
func Import(f *File, group, name, file, hash, revision string) (*imports.Task, []string) {
	it := &imports.Task{ID: name, Group: group}
	if !nameRE.MatchString(name) || !nameRE.MatchString(group) {
		it.Block(imports.NotSupported, "%s: a group or name that is not a plain name", file)
		return it, nil
	}
	c := &converter{it: it, f: f}
	t := &task.Task{
		ID:          group + "-" + name,
		Instruction: months(strings.TrimSpace(f.Task)),
		Domain:      group,
		Level:       level(f.Level),
		Kind:        task.StateTask,
		Environment: task.Environment{Type: "x11", Resolution: "1920x1080"},
		Tags:        []string{Peer, group},
		Origin:      &task.Origin{Peer: Peer, File: file, ID: group + "/" + name, Revision: revision, SHA256: hash},
	}
	c.t = t
	t.App = groupApps[group]
	c.setup(f.SetupCmd)
	c.checks()
	c.blockers()
	if t.App == "" && len(c.launched) > 0 {
		t.App = c.launched[0]
	}
	for _, a := range c.launched {
		if a != t.App && !slices.Contains(t.Apps, a) {
			t.Apps = append(t.Apps, a)
		}
	}
	if len(t.Gold) == 0 {
		t.Unproven = "OSUniverse ships no solution of this task"
	}
	it.Task = t
	return it, c.packages
}

// level is OSUniverse's level, whose names are Proctor's.
func level(s string) task.Level {
	l := task.Level(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(task.Levels, l) {
		return l
	}
	return task.Bronze
}

// monthRE is OSUniverse's placeholder of a month after the current one,
// which its harness fills in when a run starts.
var monthRE = regexp.MustCompile(`\[%MONTH\+(\d+)%\]`)

// months writes the placeholders as words the agent reads the same way
// whenever it runs.
func months(s string) string {
	return monthRE.ReplaceAllStringFunc(s, func(m string) string {
		n := monthRE.FindStringSubmatch(m)[1]
		if n == "1" {
			return "next month's"
		}
		return "the month " + n + " months from now, its"
	})
}

// groupApps are the apps of OSUniverse's groups.
var groupApps = map[string]string{
	"libreoffice_calc": "libreoffice-calc", "libreoffice_writer": "libreoffice-writer",
	"libreoffice_impress": "libreoffice-impress", "gimp": "gimp", "browser": "chromium", "games": "chromium",
}

// converter holds one task's conversion.
type converter struct {
	it       *imports.Task
	f        *File
	t        *task.Task
	launched []string
	packages []string
}

func (c *converter) unsupported(format string, args ...any) {
	c.it.Block(imports.NotSupported, format, args...)
}

// apkPackages are Alpine's packages the test cases add, as Debian's.
var apkPackages = map[string]string{
	"libreoffice": "libreoffice", "gimp": "gimp", "inkscape": "inkscape", "pandoc": "pandoc",
	"nano": "nano", "py3-virtualenv": "python3-virtualenv",
}

// officeApps are LibreOffice's apps by the type of the file they open.
var officeApps = map[string]string{
	".ods": "libreoffice-calc", ".csv": "libreoffice-calc", ".xlsx": "libreoffice-calc",
	".odt": "libreoffice-writer", ".docx": "libreoffice-writer",
	".odp": "libreoffice-impress", ".pptx": "libreoffice-impress",
}

// setup converts the setup shell line.
func (c *converter) setup(line string) {
	line = strings.TrimSpace(line)
	if line == "" || line == "None" {
		return
	}
	line = strings.NewReplacer(">/dev/null 2>&1", "", "2>&1", "", ">/dev/null", "").Replace(line)
	cwd := home
	for _, part := range strings.Split(line, "&&") {
		for _, cmd := range strings.Split(part, "&") {
			ws := strings.Fields(cmd)
			if len(ws) == 0 {
				continue
			}
			c.command(&cwd, ws)
		}
	}
}

// command converts one command of the setup line; cwd is the folder the
// line is in.
func (c *converter) command(cwd *string, ws []string) {
	switch {
	case len(ws) >= 3 && ws[0] == "sudo" && ws[1] == "apk" && ws[2] == "add":
		for _, p := range ws[3:] {
			deb, ok := apkPackages[p]
			if !ok {
				c.unsupported("setup_cmd: apk add %s, a package without a Debian counterpart known here", p)
				continue
			}
			if !slices.Contains(c.packages, deb) {
				c.packages = append(c.packages, deb)
			}
		}
	case ws[0] == "cd" && len(ws) == 2:
		if ws[1] != home && !strings.HasPrefix(ws[1], home+"/") {
			c.unsupported("setup_cmd: cd %s, outside the user's home", ws[1])
			return
		}
		*cwd = ws[1]
	case ws[0] == "wget" && len(ws) == 2 && strings.HasPrefix(ws[1], "https://"):
		base := path.Base(ws[1])
		if !nameRE.MatchString(base) {
			c.unsupported("setup_cmd: wget %s, a file without a plain name", ws[1])
			return
		}
		asset := path.Join(Peer, base)
		c.fetch(ws[1], asset)
		c.t.Setup = append(c.t.Setup, task.Step{Copy: &task.Copy{Asset: asset, To: homePath(path.Join(*cwd, base))}})
	case ws[0] == "sleep" && len(ws) == 2:
		secs, err := strconv.ParseFloat(ws[1], 64)
		if err != nil || secs <= 0 || secs > 600 {
			c.unsupported("setup_cmd: sleep %s", ws[1])
			return
		}
		d := duration.Duration(secs * 1e9)
		c.t.Setup = append(c.t.Setup, task.Step{Sleep: &d})
	case ws[0] == "setsid" && len(ws) >= 2:
		c.launch(*cwd, ws[1], ws[2:])
	default:
		c.unsupported("setup_cmd: %s", strings.Join(ws, " "))
	}
}

// launch converts a program the setup starts in the background.
func (c *converter) launch(cwd, prog string, args []string) {
	switch prog {
	case "libreoffice", "soffice":
		var files []string
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				files = append(files, a)
			}
		}
		if len(files) != 1 {
			c.unsupported("setup_cmd: libreoffice with %d files", len(files))
			return
		}
		app, ok := officeApps[strings.ToLower(path.Ext(files[0]))]
		if !ok {
			c.unsupported("setup_cmd: libreoffice opens %s, a type of file not known here", files[0])
			return
		}
		p := files[0]
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		c.start(task.Step{Launch: &task.Launch{App: app, Args: []string{homePath(p)}}}, app)
	case "xfce4-terminal":
		if len(args) > 0 {
			c.unsupported("setup_cmd: xfce4-terminal %s", strings.Join(args, " "))
			return
		}
		c.start(task.Step{Launch: &task.Launch{App: Terminal}}, Terminal)
	case "firefox":
		var urls []string
		for _, a := range args {
			if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
				urls = append(urls, a)
			} else if a != "--new-window" {
				c.unsupported("setup_cmd: firefox %s", a)
				return
			}
		}
		for _, u := range urls {
			c.it.Block(imports.LiveWeb, "setup_cmd opens %s", u)
			c.start(task.Step{Open: &task.Open{URL: u, App: "chromium"}}, "chromium")
		}
		if len(urls) == 0 {
			c.start(task.Step{Launch: &task.Launch{App: "chromium"}}, "chromium")
		}
	default:
		c.unsupported("setup_cmd: setsid %s, a program Proctor does not know", prog)
	}
}

func (c *converter) start(st task.Step, app string) {
	c.t.Setup = append(c.t.Setup, st)
	if !slices.Contains(c.launched, app) {
		c.launched = append(c.launched, app)
	}
}

// Terminal is the app of the test cases that start XFCE's terminal,
// declared in the imported suite.yaml.
const Terminal = "xfce4-terminal"

// Apps are the apps the imported suite declares.
var Apps = map[string]task.AppSpec{
	Terminal: {Command: "xfce4-terminal", Package: "xfce4-terminal", Window: "Terminal"},
}

// fetch records a file the task needs from the web.
func (c *converter) fetch(url, asset string) {
	if !c.t.Origin.Fetches(asset) {
		c.t.Origin.Fetch = append(c.t.Origin.Fetch, task.OriginFile{URL: url, Asset: asset})
	}
}

// literalRE is a returned_result's value that is one literal answer: a
// word, a number or a short title, quoted or not, and not a sentence or a
// list.
var literalRE = regexp.MustCompile(`^'?[^.,;:'"]{1,60}'?$`)

// literal is the answer a returned_result's value names, if it is one.
func literal(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if !literalRE.MatchString(v) || len(strings.Fields(v)) > 6 {
		return "", false
	}
	if strings.HasPrefix(v, "'") != strings.HasSuffix(v, "'") || v == "'" {
		return "", false
	}
	v = strings.Trim(v, "'")
	return v, strings.TrimSpace(v) != ""
}

// checks converts the checks.
func (c *converter) checks() {
	flow := false
	for i, ch := range c.f.Checks {
		value := months(strings.TrimSpace(ch.Value))
		if value == "" {
			c.unsupported("checks[%d]: a check without a value", i)
			continue
		}
		s := check.Spec{Kind: check.JudgeKind, Expectation: value}
		switch strings.TrimSpace(ch.Type) {
		case check.ReturnedResult:
			if ans, ok := literal(value); ok {
				s = check.Spec{Kind: check.AnswerKind, Accepted: check.Strings{ans}}
				c.t.Kind = task.QATask
				c.t.Gold = []action.Action{{Kind: action.Answer, Text: ans}}
			} else {
				s.Evidence = check.ReturnedResult
			}
		case check.FinalScreenshot:
			s.Evidence = check.FinalScreenshot
		case check.ExpectedFlow:
			s.Evidence = check.ExpectedFlow
			flow = true
		case check.CommandOutput:
			if strings.TrimSpace(ch.Command) == "" {
				c.unsupported("checks[%d]: command_output without a command", i)
				continue
			}
			s.Evidence = check.CommandOutput
			s.Command = homeCommand(strings.TrimSpace(ch.Command))
		default:
			c.unsupported("checks[%d]: %s checks", i, ch.Type)
			continue
		}
		if _, err := check.CompileAll([]check.Spec{s}, nil); err != nil {
			c.unsupported("checks[%d]: %v", i, err)
			continue
		}
		c.t.Checks = append(c.t.Checks, s)
	}
	// A task with an answer check asks a question; one judged on its
	// steps is a process task (unless it also asks a question, which
	// decides its kind).
	if flow && c.t.Kind != task.QATask {
		c.t.Kind = task.ProcessTask
	}
	if c.t.Kind == task.QATask && !slices.ContainsFunc(c.t.Checks, func(s check.Spec) bool { return s.Kind == check.AnswerKind }) {
		c.t.Kind = task.StateTask
	}
}

var (
	// urlRE is a web address in the instruction.
	urlRE = regexp.MustCompile(`https?://[^\s'")]+`)
	// webRE is an instruction that goes to the web: a search, a site, a
	// download, a package to install.
	webRE = regexp.MustCompile(`(?i)\b(search for|download|install|reddit|google\b.*\bsearch)`)
	// xfceRE is an instruction or a check that needs XFCE's own parts:
	// its Applications menu, panel, desktop icons and settings, or an
	// application opened by the agent from the menu or the desktop.
	xfceRE = regexp.MustCompile(`(?i)\bxfce\b|applications menu|applications >|desktop (settings|preferences)|from the desktop|top right corner of the screen|desktop background|^open (the )?(browser|terminal|gimp|libreoffice \w+)\b`)
	// alpineRE is an instruction that needs Alpine Linux's package
	// manager.
	alpineRE = regexp.MustCompile(`\bapk\b`)
)

// blockers names what keeps the task from running on this machine's
// desktop as it is.
func (c *converter) blockers() {
	text := c.f.Task
	web := slices.ContainsFunc(c.it.Reasons, func(r imports.Reason) bool { return r.Blocker == imports.LiveWeb })
	switch u := strings.TrimRight(urlRE.FindString(text), ".,;:!?"); {
	case web:
	case u != "":
		c.it.Block(imports.LiveWeb, "the instruction goes to %s", u)
	case c.t.Domain == "browser" || c.t.Domain == "games":
		c.it.Block(imports.LiveWeb, "a task of OSUniverse's %s group, on websites", c.t.Domain)
	case webRE.MatchString(text):
		c.it.Block(imports.LiveWeb, "the instruction asks to %q, which needs the internet", strings.ToLower(webRE.FindString(text)))
	}
	if alpineRE.MatchString(text) {
		c.it.Block(imports.AppMissing, "the instruction installs with Alpine Linux's apk; the desktop is Debian's")
	}
	for _, s := range append([]string{text}, values(c.f.Checks)...) {
		if m := xfceRE.FindString(s); m != "" {
			// XFCE's menus, panel, desktop and settings: the task runs
			// in an XFCE session (task.SessionXFCE), as on OSUniverse's
			// desktop.
			c.t.Environment.Session = task.SessionXFCE
			break
		}
	}
}

func values(cs []Check) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Value)
	}
	return out
}
