package task

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/statediff"
)

// Files of a suite directory.
const (
	SuiteFile = "suite.yaml" // optional: name, description, extra apps
	AssetDir  = "assets"     // files that setup steps copy and checks compare with
)

// AppSpec says how to start an application and which Debian package
// provides it.
type AppSpec struct {
	Command string `json:"command"`
	Package string `json:"package,omitempty"`
	Window  string `json:"window,omitempty"` // a title fragment its main window shows
	// Files are written into the home folder (paths relative to it) before
	// the app starts, unless already there: settings that spare first-run
	// dialogs and tips, so episodes start the same way.
	Files map[string]string `json:"files,omitempty"`
	// Env holds environment variables the app starts with, on top of the
	// desktop's.
	Env map[string]string `json:"env,omitempty"`
	// Network is "private" for an app that runs in its desktop's own
	// network namespace, where only a loopback of the desktop's own
	// exists: an API it serves there is reachable by the checks' loopback
	// probes and by nothing else, and two desktops' apps can use the same
	// port. Empty: the machine's network, as every other process.
	Network string `json:"network,omitempty"`
}

// NetworkPrivate is AppSpec.Network for an app in its desktop's own
// network namespace.
const NetworkPrivate = "private"

// libreofficeProfile turns off LibreOffice's first-run infobar, tip of
// the day, document recovery and format warnings, and opens its windows
// over the screen.
//
//go:embed apps/libreoffice.xcu
var libreofficeProfile string

var libreofficeFiles = map[string]string{".config/libreoffice/4/user/registrymodifications.xcu": libreofficeProfile}

// chromiumFlags make Chromium run as root in a closed network, quietly,
// with its accessibility tree on.
const chromiumFlags = " --no-sandbox --no-first-run --no-default-browser-check --disable-background-networking" +
	" --disable-component-update --disable-sync --disable-quic --disable-features=Translate,MediaRouter" +
	" --password-store=basic --force-renderer-accessibility --disable-gpu --start-maximized --test-type"

// chromiumFiles turn off the password manager, whose "Save password?"
// bubble would cover the page after every login form, and allow
// notifications, so that no "wants to show notifications" bubble
// (Tryton's web client asks) covers the page; blocking them kept Tryton's
// login page from drawing.
var chromiumFiles = map[string]string{".config/chromium/Default/Preferences": `{"credentials_enable_service":false,` +
	`"profile":{"password_manager_enabled":false,"default_content_setting_values":{"notifications":1}}}`}

// vlcCommand starts VLC, which refuses to run as root (the desktop's
// user), as an unprivileged user of a user namespace of its own: root's
// files, the home's among them, are that user's there.
const vlcCommand = "unshare --user --map-user=1000 --map-group=1000 vlc"

// BuiltinApps are the applications Proctor knows without a suite declaring
// them.
var BuiltinApps = map[string]AppSpec{
	"xterm":               {Command: "xterm", Package: "xterm", Window: "xterm"},
	"mousepad":            {Command: "mousepad", Package: "mousepad", Window: "Mousepad"},
	"gedit":               {Command: "gedit", Package: "gedit", Window: "gedit"},
	"gnome-calculator":    {Command: "gnome-calculator", Package: "gnome-calculator", Window: "Calculator"},
	"galculator":          {Command: "galculator", Package: "galculator", Window: "galculator"},
	"kcalc":               {Command: "kcalc", Package: "kcalc", Window: "KCalc"},
	"kalgebra":            {Command: "kalgebra", Package: "kalgebra", Window: "KAlgebra", Env: map[string]string{"QTWEBENGINE_DISABLE_SANDBOX": "1"}},
	"libreoffice-calc":    {Command: "libreoffice --calc", Package: "libreoffice-calc", Window: "LibreOffice Calc", Files: libreofficeFiles},
	"libreoffice-writer":  {Command: "libreoffice --writer", Package: "libreoffice-writer", Window: "LibreOffice Writer", Files: libreofficeFiles},
	"libreoffice-impress": {Command: "libreoffice --impress", Package: "libreoffice-impress", Window: "LibreOffice Impress", Files: libreofficeFiles},
	"gimp":                {Command: "gimp", Package: "gimp", Window: "GIMP"},
	"vlc":                 {Command: vlcCommand, Package: "vlc", Window: "VLC media player"},
	"thunderbird":         {Command: "thunderbird", Package: "thunderbird", Window: "Thunderbird"},
	"nautilus":            {Command: "nautilus", Package: "nautilus"},
	"chromium":            {Command: "chromium" + chromiumFlags, Package: "chromium", Window: "Chromium", Files: chromiumFiles},
	"yad":                 {Command: "yad", Package: "yad"},
	"pcmanfm":             {Command: "pcmanfm", Package: "pcmanfm"},
	"thunar":              {Command: "thunar", Package: "thunar"},
	"bash":                {Command: "xterm -e bash", Package: "xterm", Window: "bash"},
}

// Suite is a directory of task files with its assets.
type Suite struct {
	Dir         string             `json:"-"`
	Name        string             `json:"name,omitempty"`
	Description string             `json:"description,omitempty"`
	Apps        map[string]AppSpec `json:"apps,omitempty"`
	Services    []Service          `json:"services,omitempty"`
	Setup       *Setup             `json:"setup,omitempty"`
	// Network and Allow are what the browser's pages of every task of
	// the suite may reach, as a task's environment says (Reach).
	Network string   `json:"network,omitempty"`
	Allow   []string `json:"allow,omitempty"`
	// Session is the desktop session of the suite's x11 tasks that name
	// none (Sessions).
	Session string `json:"session,omitempty"`
	// Changes is what every task of the suite may change, besides its
	// own changes: section.
	Changes *statediff.Allowed `json:"changes,omitempty"`
	Tasks   []*Task            `json:"-"`
	// Warnings are what lint warns of in tasks that loaded: likely
	// mistakes, such as a target's role that no tree gives.
	Warnings Problems `json:"-"`
	// Personas are the personas its tasks may name (none declared: any).
	Personas []string `json:"personas,omitempty"`
	assets   map[string]bool
	// badApps are the apps suite.yaml declares with problems, by the line
	// of their entry: they are reported there once, and left out of Apps.
	badApps map[string]int
}

// App looks an app up among the suite's and the built-in ones. An app
// whose entry in suite.yaml has problems is not found, even where a
// built-in one has its name.
func (s *Suite) App(name string) (AppSpec, bool) {
	if _, bad := s.badApps[name]; bad {
		return AppSpec{}, false
	}
	if a, ok := s.Apps[name]; ok {
		return a, true
	}
	a, ok := BuiltinApps[name]
	return a, ok
}

// AppNames lists the known apps, sorted.
func (s *Suite) AppNames() []string {
	seen := map[string]bool{}
	for n := range BuiltinApps {
		seen[n] = true
	}
	for n := range s.Apps {
		seen[n] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// HasAsset reports whether the suite ships the asset.
func (s *Suite) HasAsset(name string) bool { return s.assets[filepath.ToSlash(filepath.Clean(name))] }

// AssetPath is the asset's path on disk.
func (s *Suite) AssetPath(name string) string { return filepath.Join(s.Dir, AssetDir, name) }

// Task returns the task with the id.
func (s *Suite) Task(id string) (*Task, bool) {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return nil, false
}

// Load reads a suite: a directory of task files (*.yaml, *.yml; subfolders
// included, assets/ excluded), an optional suite.yaml and assets/, or one
// task file. It returns every task that loaded and every problem found; a
// suite with problems is still returned so that callers can list both.
func Load(path string) (*Suite, Problems) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, Problems{{File: path, Msg: err.Error()}}
	}
	s := &Suite{Dir: path, assets: map[string]bool{}}
	var files []string
	if !st.IsDir() {
		s.Dir = filepath.Dir(path)
		files = []string{path}
	}
	var probs Problems
	suiteFile := filepath.Join(s.Dir, SuiteFile)
	if b, err := readLimited(suiteFile); err == nil {
		probs = append(probs, s.parseSuiteFile(suiteFile, b)...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		probs = append(probs, Problem{File: suiteFile, Msg: err.Error()})
	}
	assetRoot := filepath.Join(s.Dir, AssetDir)
	_ = filepath.WalkDir(assetRoot, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(assetRoot, p)
			if d.Type()&fs.ModeSymlink != 0 {
				// A link is an asset only while it stays within the folder,
				// as ReadAsset will read it.
				if _, err := s.ReadAsset(filepath.ToSlash(rel)); err != nil {
					probs = append(probs, Problem{File: p, Msg: "the asset is a symbolic link out of " + assetRoot + "; copy the file in instead"})
					return nil
				}
			}
			s.assets[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if st.IsDir() {
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != path && (d.Name() == AssetDir || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			ext := filepath.Ext(p)
			if !d.IsDir() && (ext == ".yaml" || ext == ".yml") && !(filepath.Dir(p) == filepath.Clean(path) && d.Name() == SuiteFile) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			probs = append(probs, Problem{File: path, Msg: err.Error()})
		}
	}
	sort.Strings(files)
	ids := map[string]string{}
	for _, f := range files {
		tasks, ps := s.loadFile(f)
		probs = append(probs, ps...)
		for _, t := range tasks {
			if prev, dup := ids[t.ID]; dup {
				probs = append(probs, Problem{File: f, Line: t.line, Col: t.col, Field: "id", Msg: fmt.Sprintf("task id %q is also used in %s", t.ID, prev)})
				continue
			}
			ids[t.ID] = f
			s.Tasks = append(s.Tasks, t.Task)
		}
	}
	if len(files) == 0 {
		probs = append(probs, Problem{File: path, Msg: "no task files (*.yaml, *.yml) found"})
	}
	return s, probs
}

// JSON renders the task in the format's JSON form (for `tasks show`).
func (t *Task) JSON() ([]byte, error) { return json.MarshalIndent(t, "", "  ") }

// Parse reads the tasks of one task or template file from its source, as
// if it were a file called name in a suite with no assets and only the
// built-in apps: what Load of a folder holding only that file gives.
func Parse(name string, src []byte) ([]*Task, Problems) {
	s := &Suite{assets: map[string]bool{}}
	ls, ps := s.parse(name, src)
	out := make([]*Task, len(ls))
	for i, l := range ls {
		out[i] = l.Task
	}
	return out, ps
}
