package task

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/observe"
)

// StepSpec is one kind of setup step. Backends execute them; Validate checks
// what can be known before a run.
type StepSpec interface {
	// Kind is the step's key in a task file: launch, run, write, ...
	Kind() string
	// Validate reports a problem as a field of the step ("app: ...").
	Validate(s *Suite) error
}

// Launch starts an application known to Proctor (or declared by the suite).
type Launch struct {
	App        string            `json:"app"`
	Args       []string          `json:"args,omitempty"`
	WaitWindow string            `json:"wait_window,omitempty"` // wait for a window whose title contains this
	Timeout    duration.Duration `json:"timeout,omitempty"`
}

// Run runs a shell command; Until, when set, is a command polled until it
// exits 0 (within Timeout). Background commands are not waited for.
// Network "private" runs both in the desktop's own network namespace,
// where the apps with network: private serve (to wait for their API, or
// to prepare their state through it).
type Run struct {
	Command    string            `json:"command"`
	Timeout    duration.Duration `json:"timeout,omitempty"`
	Until      string            `json:"until,omitempty"`
	Background bool              `json:"background,omitempty"`
	Network    string            `json:"network,omitempty"`
}

// Write writes a file with the given content.
type Write struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    string `json:"mode,omitempty"` // octal, default 0644
}

// Copy copies a file from the suite's assets into the environment.
type Copy struct {
	Asset string `json:"asset"`
	To    string `json:"to"`
}

// Open opens a file or URL with its default application, or with App.
type Open struct {
	Path string `json:"path,omitempty"`
	URL  string `json:"url,omitempty"`
	App  string `json:"app,omitempty"`
}

// WaitWindow waits until a window whose title contains Title is shown.
type WaitWindow struct {
	Title   string            `json:"title"`
	Timeout duration.Duration `json:"timeout,omitempty"`
}

// WaitElement waits until an accessibility element matching Element exists.
type WaitElement struct {
	Element observe.ElementQuery `json:"element"`
	Timeout duration.Duration    `json:"timeout,omitempty"`
}

// Focus waits for a window whose title contains Title and makes it the
// active window on top, so that a task with several applications starts
// the same way each time.
type Focus struct {
	Title   string            `json:"title"`
	Timeout duration.Duration `json:"timeout,omitempty"`
}

// Sleep waits a fixed time.
type Sleep struct {
	For duration.Duration
}

// Keys presses a key combination ("ctrl+s", "enter", "shift+ctrl+e") as
// the harness, on the window that has the focus: after the agent, to save
// what it left unsaved, say.
type Keys struct {
	Combo string
}

// Type types Text as the harness, into the focused window.
type Type struct {
	Text string
}

// Click clicks the left button at a point of the screen as the harness
// (to give a window the focus, say).
type Click struct {
	At action.Point
}

// Close asks a window whose title contains Title to close, as its close
// button would (the application may save its state or ask), and waits
// until no such window is left or Timeout passes. Kill, when set, ends the
// window's application if the window outlives the timeout.
type Close struct {
	Title   string            `json:"title"`
	Timeout duration.Duration `json:"timeout,omitempty"`
	Kill    bool              `json:"kill,omitempty"`
}

// DefaultStepTimeout bounds launch, run and wait steps that name no timeout.
const DefaultStepTimeout = 30 * time.Second

// MaxStepTimeout is the longest timeout a step may ask for.
const MaxStepTimeout = 10 * time.Minute

func (Launch) Kind() string      { return "launch" }
func (Run) Kind() string         { return "run" }
func (Write) Kind() string       { return "write" }
func (Copy) Kind() string        { return "copy" }
func (Open) Kind() string        { return "open" }
func (WaitWindow) Kind() string  { return "wait_window" }
func (Focus) Kind() string       { return "focus" }
func (WaitElement) Kind() string { return "wait_element" }
func (Sleep) Kind() string       { return "sleep" }
func (Keys) Kind() string        { return "keys" }
func (Close) Kind() string       { return "close" }
func (Type) Kind() string        { return "type" }
func (Click) Kind() string       { return "click" }

func timeoutOK(d duration.Duration) error {
	if time.Duration(d) > MaxStepTimeout {
		return fmt.Errorf("timeout: %s is longer than %s", time.Duration(d), MaxStepTimeout)
	}
	return nil
}

// Validate checks that the app is known.
func (l Launch) Validate(s *Suite) error {
	if _, bad := s.badApps[l.App]; bad {
		return fmt.Errorf("app: %s", s.unknownApp(l.App))
	}
	if _, ok := s.App(l.App); !ok {
		return fmt.Errorf("app: unknown app %q (known: %s)", l.App, strings.Join(s.AppNames(), ", "))
	}
	return timeoutOK(l.Timeout)
}

// Validate checks the timeout.
func (r Run) Validate(*Suite) error {
	if r.Background && r.Until == "" && r.Timeout != 0 {
		return fmt.Errorf("timeout: a background command without until has nothing to time out")
	}
	if r.Network != "" && r.Network != NetworkPrivate {
		return fmt.Errorf("network: %q is not a network; private runs the command in the desktop's own network namespace", r.Network)
	}
	return timeoutOK(r.Timeout)
}

// Validate checks that the path is absolute or home-relative.
func (w Write) Validate(*Suite) error { return envPath("path", w.Path) }

func envPath(field, p string) error {
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") {
		return fmt.Errorf("%s: %q must be absolute or start with ~/", field, p)
	}
	if strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
		return fmt.Errorf("%s: %q must not contain ..", field, p)
	}
	return nil
}

// Validate checks that the asset exists in the suite and the target path.
func (c Copy) Validate(s *Suite) error {
	if !filepath.IsLocal(c.Asset) || strings.Contains(c.Asset, "\\") {
		return fmt.Errorf("asset: %q must be a path inside the suite's assets", c.Asset)
	}
	if !s.HasAsset(c.Asset) {
		return fmt.Errorf("asset: %q is not in %s", c.Asset, path.Join(s.Dir, AssetDir))
	}
	return envPath("to", c.To)
}

// Validate checks that exactly one of path and url is set, and the app.
func (o Open) Validate(s *Suite) error {
	if (o.Path == "") == (o.URL == "") {
		return fmt.Errorf("path: open needs exactly one of path and url")
	}
	if o.URL != "" {
		// A service's origin is filled in when the run starts.
		u, err := url.Parse(serviceRE.ReplaceAllString(o.URL, "http://127.0.0.1:1"))
		if err != nil || u.Scheme == "" {
			return fmt.Errorf("url: %q is not an absolute URL", o.URL)
		}
	} else if err := envPath("path", o.Path); err != nil {
		return err
	}
	if o.App != "" {
		if _, bad := s.badApps[o.App]; bad {
			return fmt.Errorf("app: %s", s.unknownApp(o.App))
		}
		if _, ok := s.App(o.App); !ok {
			return fmt.Errorf("app: unknown app %q", o.App)
		}
	}
	return nil
}

// Validate checks the timeout.
func (w WaitWindow) Validate(*Suite) error { return timeoutOK(w.Timeout) }

// Validate checks the timeout.
func (f Focus) Validate(*Suite) error { return timeoutOK(f.Timeout) }

// Validate checks that the query names something and the timeout.
func (w WaitElement) Validate(*Suite) error {
	if w.Element.Role == "" && w.Element.Name == "" && w.Element.Text == "" {
		return fmt.Errorf("element: give a role, a name or a text to wait for")
	}
	return timeoutOK(w.Timeout)
}

// Validate checks that the sleep is positive and bounded.
func (z Sleep) Validate(*Suite) error {
	if z.For <= 0 {
		return fmt.Errorf("sleep: must be positive")
	}
	if time.Duration(z.For) > time.Minute {
		return fmt.Errorf("sleep: %s is longer than a minute; wait for a window or element instead", time.Duration(z.For))
	}
	return nil
}

// Validate checks that the combination names keys.
func (k Keys) Validate(*Suite) error {
	if _, err := action.Combo(k.Combo); err != nil {
		return fmt.Errorf("keys: %q: %v", k.Combo, err)
	}
	return nil
}

// Validate checks that there is text to type.
func (t Type) Validate(*Suite) error {
	if t.Text == "" {
		return fmt.Errorf("type: give the text to type")
	}
	return nil
}

// Validate checks that the point is on a screen.
func (c Click) Validate(*Suite) error {
	if c.At.X < 0 || c.At.Y < 0 {
		return fmt.Errorf("click: (%g, %g) is off the screen", c.At.X, c.At.Y)
	}
	return nil
}

// Validate checks the title and the timeout.
func (c Close) Validate(*Suite) error {
	if strings.TrimSpace(c.Title) == "" {
		return fmt.Errorf("title: give the title (or part of it) of the window to close")
	}
	return timeoutOK(c.Timeout)
}

// Step is one setup step, or one step after the agent: exactly one field
// is set.
type Step struct {
	Launch      *Launch            `json:"launch,omitempty"`
	Run         *Run               `json:"run,omitempty"`
	Write       *Write             `json:"write,omitempty"`
	Copy        *Copy              `json:"copy,omitempty"`
	Open        *Open              `json:"open,omitempty"`
	WaitWindow  *WaitWindow        `json:"wait_window,omitempty"`
	WaitElement *WaitElement       `json:"wait_element,omitempty"`
	Focus       *Focus             `json:"focus,omitempty"`
	Sleep       *duration.Duration `json:"sleep,omitempty"`
	Keys        *string            `json:"keys,omitempty"`
	Close       *Close             `json:"close,omitempty"`
	Type        *string            `json:"type,omitempty"`
	Click       *action.Point      `json:"click,omitempty"`
}

// Spec returns the step's one kind, or nil if none or several are set.
func (s Step) Spec() StepSpec {
	var out []StepSpec
	if s.Launch != nil {
		out = append(out, *s.Launch)
	}
	if s.Run != nil {
		out = append(out, *s.Run)
	}
	if s.Write != nil {
		out = append(out, *s.Write)
	}
	if s.Copy != nil {
		out = append(out, *s.Copy)
	}
	if s.Open != nil {
		out = append(out, *s.Open)
	}
	if s.WaitWindow != nil {
		out = append(out, *s.WaitWindow)
	}
	if s.WaitElement != nil {
		out = append(out, *s.WaitElement)
	}
	if s.Focus != nil {
		out = append(out, *s.Focus)
	}
	if s.Sleep != nil {
		out = append(out, Sleep{For: *s.Sleep})
	}
	if s.Keys != nil {
		out = append(out, Keys{Combo: *s.Keys})
	}
	if s.Close != nil {
		out = append(out, *s.Close)
	}
	if s.Type != nil {
		out = append(out, Type{Text: *s.Type})
	}
	if s.Click != nil {
		out = append(out, Click{At: *s.Click})
	}
	if len(out) != 1 {
		return nil
	}
	return out[0]
}
