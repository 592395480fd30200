package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/proctor-eval/proctor/task"
)

// The examples of the README and of every page under docs/ (the docs,
// readmeFiles) are run here, so that none of them drifts from what the
// code does; a failure names the file and line:
//
//   - every ```yaml block lints as a task (TestReadmeYAML). A block with an
//     id is a task file as it stands; a block that is a list of checks is a
//     fragment, linted inside a minimal task (wrapChecks says which);
//   - the process example (a yaml task of kind process) passes proctor
//     validate on a local desktop (TestReadmeProcessExample);
//   - every command of a ```sh block, and every "$ " line of a transcript
//     (a ```sh or plain block whose commands start with "$ "), is run with
//     the binary that the docs' own go build line builds, from a folder
//     holding the repository's paths, unless readmeNotRun names it with
//     the reason; a command must exit 0, and a transcript's command prints
//     the output shown under it (TestReadmeCommands);
//   - every relative link leads to a file of the repository, and its
//     #anchor to a heading of that file (TestDocsLinks).

// readmeNotRun lists the docs' commands that no test runs from the docs,
// each with the reason; the text is the command with its comment taken
// off. A command of the docs that is neither runnable here nor listed
// fails TestReadmeCommands, and so does an entry that no command of the
// docs matches.
var readmeNotRun = map[string]string{
	"bash scripts/main.sh":                                       "sets a machine up (installs packages) and runs the whole built-in suite",
	"bash scripts/test.sh":                                       "is the CI job that runs these tests",
	"bin/proctor validate testdata/runner --parallel 2":          "TestValidate runs this very command",
	"bin/proctor validate testdata/browser --env browser":        "TestValidateBrowserSuite runs this very command",
	"bin/proctor validate suites/web --env browser --parallel 2": "scripts/test.sh (CI) runs this very command",
	"bin/proctor validate suites/web --parallel 2 --filter '^(forms-signup-bluebird|confirm-archive-t203)$'": "TestWebSuiteInBothSettings runs web golds in Chromium on the X desktop",
	"bin/proctor run suites/web --agent replay --env browser --out runs/web-dom":                             "runs the 53 tasks; TestWebSuiteInBothSettings runs two of them so",
	"bin/proctor run suites/web --agent replay --out runs/web-pixels":                                        "runs the 53 tasks on desktops; TestWebSuiteInBothSettings runs two of them so",
	"bin/proctor report runs/web-dom runs/web-pixels":                                                        "needs the two runs above; TestWebSuiteInBothSettings reports its own two side by side",
	"bin/proctor setup suites/enterprise":                                                                    "installs packages as root; scripts/test.sh (CI) runs it",
	"bin/proctor setup suites/science":                                                                       "installs 2.4 GB of packages as root; scripts/test.sh (CI) runs it",
	"bin/proctor validate suites/science --parallel 2":                                                       "runs 82 tasks (433 trajectories) for about half an hour; scripts/test.sh (CI) validates a subset",
	"bin/proctor run --suite suites/science --agent replay --filter '^pymol-' --out runs/pymol":              "writes a run folder of 14 PyMOL episodes; the CI subset validates PyMOL tasks",
	"bin/proctor validate suites/enterprise --env browser --parallel 2":                                      "runs 68 tasks (about 400 trajectories) for over an hour; scripts/test.sh (CI) validates a subset",
	"bin/proctor run suites/enterprise --agent replay --env browser --filter '^tryton-' --out runs/tryton":   "runs 11 tasks; CI's validation of the suite runs them the same way",
	"bin/proctor guest --local --token-file token":                                                           "serves until stopped; TestGuestToken and the remote tests start the daemon",
	"bin/proctor setup suites/osworld":                                                                       "installs packages as root into an imported suite's machine; bench/suite-setup.sh measures it in containers",
	"bin/proctor import osworld ../OSWorld --out suites/osworld --fetch":                                     "needs a checkout of OSWorld and the internet; TestWrite (imports/osworld) imports the sample files with --fetch from a local server",
	"bin/proctor import osuniverse ../osuniverse --out suites/osuniverse --fetch":                            "needs a checkout of OSUniverse and the internet; the docs import the sample files (imports/osuniverse/testdata)",
	"bin/proctor import scienceboard ../ScienceBoard --out suites/scienceboard":                              "needs a checkout of ScienceBoard; the docs import the sample files (imports/scienceboard/testdata)",
	"bin/proctor run --agent replay --parallel 2":                                                            "runs the 96 tasks of the built-in suite (about 15 minutes)",
	"bin/proctor run --agent replay --token-file token --env guest=https://HOST:PORT#sha256=FP":              "needs a guest daemon on another machine; TestValidateOnTwoTLSGuests runs guests",
	`bin/proctor view runs --token "$PROCTOR_VIEW_TOKEN"`:                                                    "serves until stopped; the viewer's tests serve its pages",
	"bin/proctor validate suites/desktop --parallel 2":                                                       "validates the 96 tasks of the built-in suite (about 15 minutes); CI validates a subset",
	"bin/proctor validate suites/desktop --parallel 1":                                                       "validates the 96 tasks of the built-in suite (about 26 minutes)",
	"(umask 077; head -c 24 /dev/urandom | base64 > token)":                                                  "part of the guest session, whose fingerprint changes with every start",
	"bin/proctor guest --local --token-file token &":                                                         "part of the guest session, whose fingerprint changes with every start",
	`curl -sk -H "Authorization: Bearer $(cat token)" -X POST -d '{"steps":[{"launch":{"app":"kcalc","wait_window":"KCalc"}}]}' https://127.0.0.1:7400/v1/reset`:           "part of the guest session; TestGuestToken drives the daemon's routes",
	`curl -sk -H "Authorization: Bearer $(cat token)" -X POST -d '{"actions":[{"kind":"click","target":{"role":"push button","name":"7"}}]}' https://127.0.0.1:7400/v1/do`: "part of the guest session; TestGuestToken drives the daemon's routes",
	"bin/proctor run --agent replay --token-file token --env guest=https://10.0.0.5:7400#sha256=52f8c5a6… --env guest=https://10.0.0.6:7400#sha256=9b01e4d7…":              "needs guest daemons on other machines",
	"python3 examples/http-agent/agent.py 8750 &": "TestExampleHTTPAgentSolvesATask runs the example agent",
	"bin/proctor run --suite testdata/runner --agent http --agent-url http://127.0.0.1:8750 --obs a11y --filter dialog-later": "TestExampleHTTPAgentSolvesATask runs the example agent on this task",
	"apt-get install -y adb":         "installs a package as root; scripts/test.sh installs adb for the Android tests",
	"go run ./cmd/android-standin &": "TestAndroidReadmeExample runs this very command, against Debian's adb server, and stops it as the README does",
	"adb devices":                    "TestAndroidReadmeExample runs this very command, against Debian's adb server with the stand-in started above connected",
	"bin/proctor run --suite testdata/example --filter '^android-open-wifi-details$' --agent replay --env android": "TestAndroidReadmeExample runs this very command, on the stand-in started above",
	"kill %1": "TestAndroidReadmeExample stops the stand-in so: SIGTERM to the job's process group",
	"bin/proctor judge runs/DIR --judge-model gpt-5":                                                                            "needs a model API; TestJudgeEndToEnd runs proctor judge against a local stand-in of both APIs",
	"bin/proctor rescore runs/20261122-150000-replay":                                                                           "judges a run whose checks were changed afterwards; TestRescoreFlips does the same",
	"bin/proctor guest --local --vnc 127.0.0.1:0 --token-file token &":                                                          "serves until stopped, at addresses it picks; TestScreenAgentSettingOverVNC starts this guest",
	"bin/proctor run --agent replay --env vnc://127.0.0.1:5901 --vnc-guest https://127.0.0.1:7400#sha256=FP --token-file token": "needs the guest above, whose addresses and fingerprint change with every start; TestScreenAgentSettingOverVNC runs this",

	"python3 examples/judge-server/judge.py 8760 &": "TestExampleJudgeServer runs the example judge",
	"bin/proctor run testdata/judged --env mem --agent replay --filter '^judged-answer$' --judge-model local --judge-base-url http://127.0.0.1:8760/v1 --out runs/judged-local": "TestExampleJudgeServer runs this very command against the example judge, with no key set",

	"bin/proctor view runs": "serves until stopped; the viewer's tests serve its pages, and the README's --export line writes them",
	"proctor serve testdata/judged --env mem --token-file token --judge-model judge-a --judge-base-url http://127.0.0.1:8000/v1 --filter '^judged-answer$'": "serves until stopped, with a judge server running beside it; TestServeJudged starts the service with a local judge",
	"go run ./cmd/android-standin --size 1080x2340 &":                                                "starts the stand-in phone the next command validates on; env/android's TestStateDiffOverADB drives the stand-in's state",
	"bin/proctor validate suites/safety --env local --env browser --env android=SERIAL --parallel 2": "validates 43 tasks for about ten minutes with the enterprise applications and a stand-in phone; scripts/test.sh (CI) validates a desktop and a browser task of the suite",
	"bin/proctor serve testdata/runner --parallel 2 --token-file token &":                            "serves until stopped, with a fingerprint that changes with every start; TestPythonRolloutsOnDesktops starts it",
	"python3 examples/rollout/gym_loop.py --url https://127.0.0.1:7500#sha256=FP --token-file token": "needs the service above; TestPythonRolloutsOnDesktops runs the example against it",

	"bin/proctor run --agent replay --env 'kube://evals?pods=4&image=registry.example/proctor-guest:1'": "needs a Kubernetes cluster and a pushed guest image; TestKubeBed runs the provider on the test bed",
	"bin/proctor validate testdata/runner --env 'kube://kind-dev/evals?pods=2&memory=1Gi&wait=90s'":     "needs a Kubernetes cluster; TestKubeBed validates tasks of testdata/runner on the test bed",
	"bin/proctor kube clean --all --namespace evals":                                                    "needs a Kubernetes cluster; TestKubeBed cleans its bed's namespace so",
	"tools/kubebed/build.sh":                 "builds Kubernetes from the Go module proxy (minutes, ~3 GB of build cache); TestKubeBed uses its cached binaries",
	"tools/kubebed/up.sh /var/tmp/kubebed 2": "starts a test bed as root that runs until stopped; TestKubeBed starts one so",
	"KUBECONFIG=/var/tmp/kubebed/kubeconfig bin/proctor validate testdata/runner --env 'kube://default?pods=2'": "needs the test bed above; TestKubeBed runs this validation",
	"tools/kubebed/down.sh /var/tmp/kubebed":                                                                               "stops the test bed above",
	"podman build -f images/guest/Containerfile -t registry.example/proctor-guest:1 .":                                     "needs podman and a registry's Debian image; images/guest/build.sh builds the same packages here",
	"podman push registry.example/proctor-guest:1":                                                                         "needs a registry",
	"podman build -f images/guest/Containerfile --build-arg VARIANT=desktop -t registry.example/proctor-guest:1-desktop .": "needs podman and a registry's Debian image",
	"images/guest/build.sh -o bin/proctor-guest.tar -t proctor-guest:1":                                                    "downloads Debian packages and takes minutes (its size is stated in docs/environments/kube.md)",
	"bin/proctor kube pool up default --pods 4 --image registry.example/proctor-guest:1 --namespace evals":                 "needs a Kubernetes cluster and a pushed guest image; TestKubeBedPool makes a pool on the test bed",
	"bin/proctor run --agent replay --env 'kube://evals?pool=default&pods=4'":                                              "needs the pool above; TestKubeBedPool runs tasks on a pool of the test bed",
	"bin/proctor kube pool up burst --pods 2 --max 8 --namespace evals":                                                    "needs a Kubernetes cluster; TestKubeBedPool grows a pool of 2 with --max 4 on the test bed",
	"bin/proctor kube pool status default --namespace evals":                                                               "needs the pool above; TestKubeBedPool reads its pool's status",
	"bin/proctor kube pool down default --namespace evals":                                                                 "needs the pool above; TestKubeBedPool takes its pool down",
}

// readmeOutputNotCompared lists transcripts whose command runs but whose
// output the docs show otherwise than printed, with the reason.
var readmeOutputNotCompared = map[string]string{
	"bin/proctor tasks stats suites/desktop": "docs/suites/desktop.md shows the tables side by side, without bars, and says so",
	"bin/proctor probe suites/desktop gimp-draw-horizontal-line 'file: ~/canvas.png, read: image' --gold": "GIMP's canvas moves by a " +
		"pixel or two with the fonts installed (Request Tracker's packages add Noto), and the line with it; docs/tasks.md says so",
}

// readmeFails are the transcripts that show a failure without an error
// line ("proctor: ..."): their command must exit non-zero.
var readmeFails = map[string]bool{
	"bin/proctor tasks lint task/testdata/broken/bad-steps.yaml": true,
}

// showsError reports whether a transcript's output shows proctor's error.
func showsError(output []string) bool {
	for _, l := range output {
		if strings.HasPrefix(l, "proctor: ") {
			return true
		}
	}
	return false
}

// readmeRunnable are the commands run from the docs: the build, and the
// proctor commands that need no network and end by themselves (probe
// needs a desktop, and is skipped where there is none; kube job only
// prints manifests).
var readmeRunnable = regexp.MustCompile(`^(go build |bin/proctor (tasks (lint|list|expand|show|schema|stats|select)|parse|report|export|rescore|probe|setup \S+ --dry-run|validate \S+ --env mem|run \S+ --env mem|view \S+ --export|import|verify|kube job) )`)

// readmeFixtureRun is the run folder that stands for the docs'
// runs/DIR: a run recorded by recordRun (rescore_test.go).
const readmeFixtureRun = "20261122-150000-replay"

// readmePlaceholders are the docs' placeholders and what the test puts
// in their place, in order.
var readmePlaceholders = []struct{ from, to string }{
	{"runs/DIR...", "runs/DIR"},
	{"runs/DIR", "runs/" + readmeFixtureRun},
}

// fence is one fenced block of the docs.
type fence struct {
	lang    string
	file    string // the file, relative to the repository's root
	section string // the ## heading above it
	line    int    // of its first content line
	lines   []string
}

// readmeFiles are the docs whose examples are run: README.md, then every
// Markdown page under docs/, by path; paths are relative to the
// repository's root, and slash-separated.
func readmeFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	var pages []string
	err := filepath.WalkDir("../../docs", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel("../..", path)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return append(files, pages...)
}

// readmeFences are the fenced blocks of the docs, file by file.
func readmeFences(t *testing.T) []fence {
	t.Helper()
	var out []fence
	for _, f := range readmeFiles(t) {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			t.Fatal(err)
		}
		fs, err := fileFences(f, string(b))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	return out
}

// fileFences are the fenced blocks of one file's text.
func fileFences(file, text string) ([]fence, error) {
	var out []fence
	var cur *fence
	section := ""
	for i, l := range strings.Split(text, "\n") {
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		case strings.HasPrefix(l, "```"):
			cur = &fence{lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), file: file, section: section, line: i + 2}
		case strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a fenced block is not closed", file, cur.line-1)
	}
	return out, nil
}

// readmeCommand is one command of the docs.
type readmeCommand struct {
	file       string
	line       int
	section    string
	text       string   // the command, continuation lines joined
	transcript bool     // a "$ " line, with the output shown under it
	output     []string // for a transcript
}

// at is where the command stands: FILE:LINE.
func (c readmeCommand) at() string { return fmt.Sprintf("%s:%d", c.file, c.line) }

// key is the command without its comment, as readmeNotRun names it.
func (c readmeCommand) key() string {
	return strings.TrimSpace(shellComment.ReplaceAllString(c.text, ""))
}

// shellComment is a comment after a command: a # that begins a word.
var shellComment = regexp.MustCompile(`\s+#\s.*$`)

func readmeCommands(fences []fence) []readmeCommand {
	var out []readmeCommand
	for _, f := range fences {
		if f.lang != "sh" && f.lang != "" {
			continue
		}
		transcript := false
		for _, l := range f.lines {
			if strings.HasPrefix(l, "$ ") {
				transcript = true
			}
		}
		if !transcript && f.lang != "sh" {
			continue // a diagram or an output shown alone
		}
		var cur *readmeCommand
		cont := false // the command goes on after a backslash
		for i, l := range f.lines {
			switch {
			case cont:
				cur.text = strings.TrimRight(strings.TrimSuffix(cur.text, "\\"), " ") + " " + strings.TrimSpace(l)
			case transcript && strings.HasPrefix(l, "$ "):
				out = append(out, readmeCommand{file: f.file, line: f.line + i, section: f.section, text: strings.TrimPrefix(l, "$ "), transcript: true})
				cur = &out[len(out)-1]
			case transcript:
				if cur != nil {
					cur.output = append(cur.output, l)
				}
				continue
			case strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#"):
				continue
			default:
				out = append(out, readmeCommand{file: f.file, line: f.line + i, section: f.section, text: l})
				cur = &out[len(out)-1]
			}
			cont = strings.HasSuffix(strings.TrimRight(cur.text, " "), "\\")
		}
	}
	return out
}

// TestReadmeYAML lints every YAML example of the docs as a task file.
func TestReadmeYAML(t *testing.T) {
	n := 0
	for _, f := range readmeFences(t) {
		if f.lang != "yaml" {
			continue
		}
		n++
		src := strings.Join(f.lines, "\n") + "\n"
		doc, how := wrapChecks(t, src)
		dir := t.TempDir()
		file := filepath.Join(dir, "example.yaml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(doc, "service: helpdesk") { // the example suite's service and its database
			for _, name := range []string{task.SuiteFile, "helpdesk"} {
				src, err := filepath.Abs(filepath.Join("../../testdata/example", name))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(src, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
		}
		s, ps := task.Load(file)
		if len(ps) > 0 {
			t.Errorf("%s:%d: the YAML example (%s) does not lint:\n%v", f.file, f.line, how, ps)
			continue
		}
		if len(s.Tasks) == 0 {
			t.Errorf("%s:%d: the YAML example (%s) holds no task", f.file, f.line, how)
		}
	}
	// The task format's example, the image predicate and the process task.
	if n < 3 {
		t.Fatalf("the docs have %d YAML examples; the extraction misses some", n)
	}
}

// wrapChecks makes a task file of a YAML example of the docs. A task (a
// mapping with an id) stands as it is. A fragment goes inside a minimal
// state task of the paper level on xterm, whose gold solution is done at
// once: a list of checks becomes its checks, one check (a mapping with a
// kind and no id) its only check, and other mappings without an id (a
// task's after section, say) are added to it. A task file is linted as
// it stands.
func wrapChecks(t *testing.T, src string) (doc, how string) {
	t.Helper()
	minimal := "id: readme-checks\ninstruction: The README's checks, in a task.\napp: xterm\nlevel: paper\nkind: state\n" +
		"gold: [{kind: done}]\nchecks:\n"
	if strings.Contains(src, "page:") { // page probes: a browser's task
		minimal = strings.Replace(minimal, "app: xterm\n", "environment: {type: browser}\n", 1)
	}
	var v any
	if err := yaml.Unmarshal([]byte(src), &v); err != nil {
		return src, "not YAML"
	}
	switch x := v.(type) {
	case []any:
		return minimal + indentLines(src, "  "), "a list of checks, inside a minimal task"
	case map[string]any:
		_, id := x["id"]
		_, kind := x["kind"]
		if !id && kind {
			return minimal + "  - " + strings.TrimPrefix(indentLines(src, "    "), "    "), "a check, inside a minimal task"
		}
		if !id {
			return minimal + "  - {kind: exact, probe: {file: ~/a.txt}, expected: a}\n" + src, "sections of a task, inside a minimal task"
		}
	}
	return src, "a task file"
}

// needX skips a test when the programs of a local desktop, or those named,
// are not installed.
func needX(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range append([]string{"Xvfb", "dbus-daemon", "openbox"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

// taskPrograms are the programs a task's setup starts.
func taskPrograms(t *testing.T, s *task.Suite, tk *task.Task) []string {
	t.Helper()
	var out []string
	for _, st := range tk.Setup {
		name := ""
		switch {
		case st.Launch != nil:
			name = st.Launch.App
		case st.Open != nil:
			name = st.Open.App
		}
		if name == "" {
			continue
		}
		if a, ok := s.App(name); ok {
			out = append(out, strings.Fields(a.Command)[0])
		}
	}
	return out
}

// TestReadmeProcessExample validates the docs' process task on a local
// desktop: its gold solution must pass, doing nothing and its wrong
// trajectory must not.
func TestReadmeProcessExample(t *testing.T) {
	n := 0
	for _, f := range readmeFences(t) {
		if f.lang != "yaml" || !slicesContain(f.lines, "kind: process") {
			continue
		}
		n++
		t.Run(fmt.Sprintf("%s:%d", f.file, f.line), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "process.yaml"), []byte(strings.Join(f.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, ps := task.Load(dir)
			if len(ps) > 0 {
				t.Fatalf("%s:%d: %v", f.file, f.line, ps)
			}
			needX(t, taskPrograms(t, s, s.Tasks[0])...)
			out, errs, code := runCLI(t, "", "validate", dir, "--verbose")
			if code != 0 {
				t.Fatalf("%s:%d: the process example fails proctor validate (exit %d):\n%s\n%s", f.file, f.line, code, out, errs)
			}
		})
	}
	if n == 0 {
		t.Fatal("the docs have no process task example")
	}
}

func slicesContain(lines []string, s string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}

// TestReadmeCommands runs the docs' commands, file by file, with the
// binary their build line builds.
func TestReadmeCommands(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	cmds := readmeCommands(readmeFences(t))
	if len(cmds) < 20 {
		t.Fatalf("the docs have %d commands; the extraction misses some", len(cmds))
	}
	build, runnable, problems := planReadme(cmds)
	for _, p := range problems {
		t.Error(p)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The folder the commands run in holds the repository's paths.
	work := t.TempDir()
	for _, p := range []string{"testdata", "task", "suites", "examples", "imports"} {
		if err := os.Symlink(filepath.Join(repo, p), filepath.Join(work, p)); err != nil {
			t.Fatal(err)
		}
	}
	suiteDir := filepath.Join(t.TempDir(), "suite")
	writeFiles(t, suiteDir, rescoreSuite)
	recordRun(t, filepath.Join(work, "runs", readmeFixtureRun), suiteDir, rescoreEpisodes)

	if build == nil {
		t.Fatal("the docs have no go build line for bin/proctor")
	}
	// The docs' build line, with its output in the test's folder.
	bin := filepath.Join(work, "bin", "proctor")
	line := strings.Replace(build.key(), "-o bin/proctor", "-o "+bin, 1)
	if line == build.key() {
		t.Fatalf("%s: the build line does not write bin/proctor: %s", build.at(), line)
	}
	if out, err := shell(repo, line); err != nil {
		t.Fatalf("%s: %s: %v\n%s", build.at(), line, err, out)
	}
	for _, c := range runnable {
		t.Run(c.at(), func(t *testing.T) {
			k := c.key()
			if strings.HasPrefix(k, "bin/proctor probe ") {
				needProbeDesktop(t, repo, k)
			}
			for _, p := range readmePlaceholders {
				k = strings.ReplaceAll(k, p.from, p.to)
			}
			cmd := exec.Command("bash", "-c", k)
			cmd.Dir = work
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			wantFail := c.transcript && (readmeFails[c.key()] || showsError(c.output))
			switch {
			case err != nil && !wantFail:
				t.Fatalf("%s: %s: %v\nstdout:\n%s\nstderr:\n%s", c.at(), k, err, stdout.String(), stderr.String())
			case err == nil && wantFail:
				t.Fatalf("%s: %s succeeded; the docs show an error\nstdout:\n%s", c.at(), k, stdout.String())
			}
			if !c.transcript {
				return
			}
			if why, ok := readmeOutputNotCompared[c.key()]; ok {
				t.Logf("output not compared: %s", why)
				return
			}
			out, errOut := lines(stdout.String()), lines(stderr.String())
			for _, got := range [][]string{out, append(append([]string{}, errOut...), out...), append(append([]string{}, out...), errOut...)} {
				if matchOutput(trimLines(c.output), got) {
					return
				}
			}
			t.Errorf("%s: %s prints otherwise than the docs show\n%s:\n%s\nstdout:\n%s\nstderr:\n%s",
				c.at(), k, c.file, strings.Join(c.output, "\n"), stdout.String(), stderr.String())
		})
	}
}

// planReadme sorts the docs' commands: the build line, the commands to
// run, and a problem for each command that is neither runnable nor listed
// in readmeNotRun, for each build line that differs from the first, and
// for each entry of the tables that names no command of the docs.
func planReadme(cmds []readmeCommand) (build *readmeCommand, runnable []readmeCommand, problems []string) {
	used := map[string]bool{}
	for _, c := range cmds {
		k := c.key()
		if _, ok := readmeNotRun[k]; ok {
			used[k] = true
			continue
		}
		if !readmeRunnable.MatchString(k + " ") {
			problems = append(problems, fmt.Sprintf("%s: %q is neither run by this test nor listed in readmeNotRun with a reason", c.at(), k))
			continue
		}
		if strings.HasPrefix(k, "go build ") {
			switch {
			case build == nil:
				build = &c
			case k != build.key():
				problems = append(problems, fmt.Sprintf("%s: the build line %q is not the one of %s, %q", c.at(), k, build.at(), build.key()))
			}
			continue
		}
		runnable = append(runnable, c)
	}
	for k := range readmeNotRun {
		if !used[k] {
			problems = append(problems, fmt.Sprintf("readmeNotRun names %q, which the docs do not hold", k))
		}
	}
	transcript := func(k string) bool {
		for _, c := range runnable {
			if c.transcript && c.key() == k {
				return true
			}
		}
		return false
	}
	for k := range readmeOutputNotCompared {
		if !transcript(k) {
			problems = append(problems, fmt.Sprintf("readmeOutputNotCompared names %q, which is no transcript of the docs", k))
		}
	}
	for k := range readmeFails {
		if !transcript(k) {
			problems = append(problems, fmt.Sprintf("readmeFails names %q, which is no transcript of the docs", k))
		}
	}
	sort.Strings(problems)
	return build, runnable, problems
}

// needProbeDesktop skips a probe command where a local desktop, or the
// applications its task starts, are missing.
func needProbeDesktop(t *testing.T, repo, line string) {
	t.Helper()
	f := strings.Fields(line) // bin/proctor probe SUITE TASK ...
	s, _ := task.Load(filepath.Join(repo, f[2]))
	if s == nil {
		t.Fatalf("%s: the suite does not load", line)
	}
	tk, ok := s.Task(f[3])
	if !ok {
		t.Fatalf("%s: no task %s", line, f[3])
	}
	needX(t, taskPrograms(t, s, tk)...)
}

func shell(dir, line string) ([]byte, error) {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return trimLines(strings.Split(s, "\n"))
}

// trimLines takes trailing spaces off each line and empty lines off the end.
func trimLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight(l, " \t")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// matchOutput reports whether got is the output want shows, where a line
// "..." stands for any number of lines.
func matchOutput(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if matchOutput(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && matchOutput(want[1:], got[1:])
}

// TestPlanReadme: a command of the docs that is neither runnable nor
// listed, a listed command the docs no longer hold, and a second build
// line unlike the first are all problems.
func TestPlanReadme(t *testing.T) {
	cmds := readmeCommands(readmeFences(t))
	if _, _, problems := planReadme(cmds); len(problems) > 0 {
		t.Fatalf("the docs as they are: %v", problems)
	}
	added := append(append([]readmeCommand{}, cmds...), readmeCommand{file: "docs/x.md", line: 999, text: "bin/proctor run --agent noop   # a new line"})
	if _, _, problems := planReadme(added); len(problems) != 1 || !strings.Contains(problems[0], `docs/x.md:999: "bin/proctor run --agent noop" is neither run`) {
		t.Errorf("a new command without an entry: %v", problems)
	}
	other := append(append([]readmeCommand{}, cmds...), readmeCommand{file: "docs/x.md", line: 7, text: "go build -o bin/proctor ./cmd/proctor"})
	if _, _, problems := planReadme(other); len(problems) != 1 || !strings.Contains(problems[0], `docs/x.md:7: the build line "go build -o bin/proctor ./cmd/proctor" is not the one of README.md:`) {
		t.Errorf("a second, different build line: %v", problems)
	}
	var removed []readmeCommand
	for _, c := range cmds {
		if c.key() != "bash scripts/main.sh" {
			removed = append(removed, c)
		}
	}
	if _, _, problems := planReadme(removed); len(problems) != 1 || !strings.Contains(problems[0], `readmeNotRun names "bash scripts/main.sh"`) {
		t.Errorf("an entry without its command: %v", problems)
	}
	build, runnable, _ := planReadme(cmds)
	if build == nil || !strings.HasPrefix(build.key(), "go build ") {
		t.Errorf("build line %+v", build)
	}
	for _, c := range runnable {
		if _, skipped := readmeNotRun[c.key()]; skipped {
			t.Errorf("%q is both run and skipped", c.key())
		}
	}
}

func TestReadmeCommandExtraction(t *testing.T) {
	fences := []fence{
		{lang: "sh", line: 10, lines: []string{"bin/proctor tasks list x   # one line", "", "bin/proctor run --agent replay \\", "  --env local=2"}},
		{lang: "", line: 20, lines: []string{"$ bin/proctor tasks expand t.yaml", "calc-add  [a=1]", "$ bin/proctor parse -f json x", "proctor: bad"}},
		{lang: "", line: 30, lines: []string{"cmd/proctor/   the binary"}},
		{lang: "yaml", line: 40, lines: []string{"id: x"}},
	}
	got := readmeCommands(fences)
	want := []readmeCommand{
		{line: 10, text: "bin/proctor tasks list x   # one line"},
		{line: 12, text: "bin/proctor run --agent replay --env local=2"},
		{line: 20, text: "bin/proctor tasks expand t.yaml", transcript: true, output: []string{"calc-add  [a=1]"}},
		{line: 22, text: "bin/proctor parse -f json x", transcript: true, output: []string{"proctor: bad"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if k := got[0].key(); k != "bin/proctor tasks list x" {
		t.Errorf("key %q", k)
	}
	if k := (readmeCommand{text: "bin/proctor run --env guest=https://h:1#sha256=FP   # on a guest"}).key(); k != "bin/proctor run --env guest=https://h:1#sha256=FP" {
		t.Errorf("a # inside a word is no comment: %q", k)
	}
}

func TestMatchOutput(t *testing.T) {
	tests := []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]string{"a", "b"}, []string{"a", "b", "c"}, false},
		{[]string{"a", "...", "d"}, []string{"a", "b", "c", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "d"}, true},
		{[]string{"a", "...", "d"}, []string{"a", "b"}, false},
		{[]string{"..."}, nil, true},
		{nil, []string{"x"}, false},
	}
	for _, tc := range tests {
		if got := matchOutput(tc.want, tc.got); got != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
}

// TestWrapChecks: fragments are linted inside a minimal task, so a good
// fragment passes and a bad one is named at its field.
func TestWrapChecks(t *testing.T) {
	tests := []struct {
		name, src, how, problem string
	}{
		{"a list of checks", "- kind: exists\n  file: ~/a.txt\n- kind: contains\n  probe: {file: ~/a.txt}\n  value: x\n", "a list of checks, inside a minimal task", ""},
		{"one check", "kind: predicate\nprobe: {file: ~/a.png, read: image}\nexpr: value.width > 1\n", "a check, inside a minimal task", ""},
		{"a bad check", "- kind: range\n  probe: {command: wc -l}\n  expected: 3\n", "a list of checks, inside a minimal task", "checks[0].expected: does not apply to a range check"},
		{"a task", "id: t\ninstruction: x\napp: xterm\nlevel: paper\nkind: state\nchecks: [{kind: exists, file: ~/a}]\ngold: [{kind: done}]\n", "a task file", ""},
		{"sections", "after:\n  - keys: ctrl+s\n", "sections of a task, inside a minimal task", ""},
		{"bad sections", "after:\n  - keys: ctrl+frob\n", "sections of a task, inside a minimal task", `after[0].keys: "ctrl+frob": unknown key "frob"`},
		{"neither", "name: x\n", "sections of a task, inside a minimal task", `unknown field "name"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, how := wrapChecks(t, tc.src)
			if how != tc.how {
				t.Errorf("taken as %s, want %s", how, tc.how)
			}
			file := filepath.Join(t.TempDir(), "x.yaml")
			if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, ps := task.Load(file)
			switch {
			case tc.problem == "" && len(ps) > 0:
				t.Errorf("problems:\n%v\n%s", ps, doc)
			case tc.problem != "" && !strings.Contains(ps.Error(), tc.problem):
				t.Errorf("problems lack %q:\n%v", tc.problem, ps)
			}
		})
	}
}

// TestReadmeCommandsParse parses every proctor command of the docs, the
// ones the tests do not run included, as the binary would: the subcommand
// must exist and take the flags and arguments written, so that a command
// a reader copies fails only for what it does, never for how it is
// written.
func TestReadmeCommandsParse(t *testing.T) {
	n := 0
	for _, c := range readmeCommands(readmeFences(t)) {
		args, ok := proctorArgs(c.key())
		if !ok {
			continue
		}
		n++
		if err := parseProctor(args); err != nil {
			t.Errorf("%s: %s: %v", c.at(), c.key(), err)
		}
	}
	if n < 30 {
		t.Fatalf("%d proctor commands parsed; the extraction misses some", n)
	}
	// What the parse refuses.
	for _, bad := range []string{
		"bin/proctor run --no-such-flag",
		"bin/proctor nosuchcommand x",
		"bin/proctor tasks lint --agent replay suites/web",
		"bin/proctor run suites/web suites/desktop --agent replay | tail",
	} {
		args, _ := proctorArgs(bad)
		if err := parseProctor(args); err == nil {
			t.Errorf("%s parses", bad)
		}
	}
}

// parseProctor finds the subcommand of args and parses its flags and
// arguments, running nothing.
func parseProctor(args []string) error {
	cmd, rest, err := newRootCommand().Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// proctorArgs splits a shell line that runs bin/proctor into its
// arguments, quotes removed, up to a pipe, a redirection, a list operator
// or a trailing &; ok is false for a line that does not run bin/proctor.
func proctorArgs(line string) (args []string, ok bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 || words[0] != "bin/proctor" {
		return nil, false
	}
	for i, w := range words[1:] {
		if w == "|" || w == "&&" || w == ";" || w == "&" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			return words[1 : i+1], true
		}
	}
	return words[1:], true
}

// indentLines puts prefix before each line of s.
func indentLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}
