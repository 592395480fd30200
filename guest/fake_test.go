package guest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/observe"
)

// rootEnv is an env.Env for tests that need no X server: its files live
// in a temporary folder confined with os.Root, its screen is 100x100, and
// its actions are only recorded. Its errors are xdesktop's: file errors
// as the operating system gives them (a missing file is
// observe.ErrNotFound, a path outside the home env.ErrForbidden), an
// invalid action env.ErrBadAction, but a point off the screen and a
// screenshot scale it cannot make plain errors.
type rootEnv struct {
	dir    string // holds home and secret.txt
	home   string // the only allowed root, "~"
	root   *os.Root
	secret []byte // the content of dir/secret.txt, outside the root
}

var _ env.Env = (*rootEnv)(nil)

var fakeScreen = action.Size{W: 100, H: 100}

// newRootEnv makes the folders: home holds docs/a.txt and a symbolic link
// "escape" to the secret file beside home.
func newRootEnv(t testing.TB) *rootEnv {
	t.Helper()
	dir := t.TempDir()
	e := &rootEnv{dir: dir, home: filepath.Join(dir, "home"), secret: []byte("secret-" + NewToken())}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "secret.txt"), e.secret, 0o600))
	must(os.MkdirAll(filepath.Join(e.home, "docs"), 0o755))
	must(os.WriteFile(filepath.Join(e.home, "docs", "a.txt"), []byte("hello"), 0o644))
	must(os.Symlink("../secret.txt", filepath.Join(e.home, "escape")))
	root, err := os.OpenRoot(e.home)
	must(err)
	t.Cleanup(func() { root.Close() })
	e.root = root
	return e
}

// rel turns a path of the API into one relative to the root.
func (e *rootEnv) rel(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = e.home + p[1:]
	}
	if !filepath.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return "", fmt.Errorf("%w: %q", env.ErrForbidden, p)
	}
	rel, err := filepath.Rel(e.home, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %q is outside %s", env.ErrForbidden, p, e.home)
	}
	return rel, nil
}

func (e *rootEnv) fileErr(err error) error {
	var errno syscall.Errno
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%v: %w", err, observe.ErrNotFound)
	case !errors.As(err, &errno):
		// os.Root's "path escapes from parent" carries no errno.
		return fmt.Errorf("%w: %v", env.ErrForbidden, err)
	}
	return err
}

func (e *rootEnv) ReadFile(ctx context.Context, p string) ([]byte, error) {
	rel, err := e.rel(p)
	if err != nil {
		return nil, err
	}
	b, err := e.root.ReadFile(rel)
	return b, e.fileErr(err)
}

func (e *rootEnv) WriteFile(ctx context.Context, p string, data []byte) error {
	rel, err := e.rel(p)
	if err != nil {
		return err
	}
	if err := e.root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return e.fileErr(err)
	}
	return e.fileErr(e.root.WriteFile(rel, data, 0o644))
}

func (e *rootEnv) Info(ctx context.Context) (env.Info, error) {
	return env.Info{Kind: "fake", Screen: fakeScreen, Home: e.home}, nil
}

func (e *rootEnv) Screenshot(ctx context.Context, o env.ShotOptions) (env.Shot, error) {
	w, h := fakeScreen.W, fakeScreen.H
	if o.Scale > 0 && o.Scale != 1 {
		w, h = int(float64(w)*o.Scale), int(float64(h)*o.Scale)
		if w < 1 || h < 1 || o.Scale > 4 {
			return env.Shot{}, fmt.Errorf("scale %g is out of range", o.Scale)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		return env.Shot{}, err
	}
	return env.Shot{Data: buf.Bytes(), Format: "png", Size: action.Size{W: w, H: h}}, nil
}

func (e *rootEnv) Tree(ctx context.Context) (*observe.Tree, error) {
	return &observe.Tree{}, nil
}

func (e *rootEnv) Do(ctx context.Context, acts []action.Action) ([]action.Step, error) {
	var steps []action.Step
	for i, a := range acts {
		if err := a.Validate(); err != nil {
			return steps, fmt.Errorf("action %d (%s): %w: %v", i+1, a, env.ErrBadAction, err)
		}
		if a.Point != nil && a.Kind != action.MoveRel {
			if _, _, err := a.Point.Pixels(fakeScreen); err != nil {
				return steps, fmt.Errorf("action %d (%s): %w", i+1, a, err)
			}
		}
		steps = append(steps, action.Step{Action: a})
	}
	return steps, nil
}

// Run runs nothing: a fuzzer's commands must not reach a shell.
func (e *rootEnv) Run(ctx context.Context, cmd string, timeout time.Duration) (observe.CommandResult, error) {
	return observe.CommandResult{}, nil
}

func (e *rootEnv) Windows(ctx context.Context) ([]env.Window, error) { return nil, nil }

func (e *rootEnv) Elements(ctx context.Context, q observe.ElementQuery) ([]observe.Element, error) {
	return nil, nil
}

func (e *rootEnv) Clipboard(ctx context.Context) (string, error) { return "", nil }
func (e *rootEnv) Reset(ctx context.Context, s env.Setup) error  { return nil }
func (e *rootEnv) Close() error                                  { return nil }

// FuzzHandler sends arbitrary requests, most with the right token, to the
// API over a rootEnv and checks that the handler never panics, never
// answers 500 (the fake has no trouble of its own, so any 500 is a client
// mistake misfiled), answers every error with a JSON body and a kind,
// never sends the content of the file outside the root nor changes it,
// and never logs the token.
func FuzzHandler(f *testing.F) {
	e := newRootEnv(f)
	var logBuf bytes.Buffer
	s := &Server{Env: e, Token: NewToken(), MaxBody: 1 << 10, Log: log.New(&logBuf, "", 0)}
	h := s.Handler()
	for _, seed := range []struct {
		method, target, ctype, body string
	}{
		{"GET", remote.PathHealth, "", ""},
		{"GET", remote.PathInfo, "", ""},
		{"GET", remote.PathScreenshot + "?scale=0.5&jpeg=80&cursor=1&marks=1", "", ""},
		{"GET", remote.PathScreenshot + "?scale=NaN", "", ""},
		{"GET", remote.PathTree + "?format=text", "", ""},
		{"POST", remote.PathDo, "application/json", `{"actions":[{"kind":"click","point":{"x":5,"y":5}},{"kind":"type","text":"hi"}]}`},
		{"POST", remote.PathDo, "application/json", `{"actions":[{"kind":"click","point":{"x":500,"y":5}}]}`},
		{"POST", remote.PathRun, "application/json", `{"command":"ls","timeout_ms":1000}`},
		{"GET", remote.PathFile + "?path=~/docs/a.txt", "", ""},
		{"GET", remote.PathFile + "?path=~/escape", "", ""},
		{"GET", remote.PathFile + "?path=~/docs", "", ""},
		{"GET", remote.PathFile + "?path=~/../secret.txt", "", ""},
		{"PUT", remote.PathFile + "?path=~/new/b.txt", "application/octet-stream", "data"},
		{"PUT", remote.PathFile + "?path=~/escape", "application/octet-stream", "overwrite"},
		{"GET", remote.PathWindows, "", ""},
		{"POST", remote.PathElements, "application/json", `{"role":"push button","name":"OK"}`},
		{"GET", remote.PathClipboard, "", ""},
		{"POST", remote.PathReset, "application/json", `{"steps":[{"run":"true"}],"assets":{"a":"aGk="}}`},
		{"DELETE", remote.PathFile + "?path=~/docs/a.txt", "", ""},
		{"GET", "/v2/nothing", "", ""},
	} {
		f.Add(seed.method, seed.target, uint8(2), seed.ctype, []byte(seed.body))
	}
	secretFile := filepath.Join(e.dir, "secret.txt")
	f.Fuzz(func(t *testing.T, method, target string, auth uint8, ctype string, body []byte) {
		var hdr strings.Builder
		switch auth % 8 {
		case 0: // none
		case 1:
			hdr.WriteString("Authorization: Bearer wrong\r\n")
		default:
			hdr.WriteString("Authorization: Bearer " + s.Token + "\r\n")
		}
		if ctype != "" {
			hdr.WriteString("Content-Type: " + ctype + "\r\n")
		}
		raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: guest\r\n%sContent-Length: %d\r\n\r\n%s", method, target, hdr.String(), len(body), body)
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			return // net/http answers 400 itself before any handler
		}
		logBuf.Reset()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		resp := w.Result()
		got := w.Body.Bytes()
		where := fmt.Sprintf("%q %q -> %d %q", method, target, resp.StatusCode, got)

		if resp.StatusCode == http.StatusInternalServerError {
			t.Fatalf("500 for a client's request: %s", where)
		}
		if resp.StatusCode >= 400 {
			var ae remote.ErrorBody
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("error with Content-Type %q: %s", ct, where)
			}
			if err := json.Unmarshal(got, &ae); err != nil || ae.Kind == "" || ae.Error == "" {
				t.Fatalf("error without a JSON body with a kind (%v): %s", err, where)
			}
		}
		if r.URL.Path == remote.PathDo && resp.StatusCode == http.StatusOK {
			var dr remote.DoResponse
			if err := json.Unmarshal(got, &dr); err != nil {
				t.Fatalf("do: %v: %s", err, where)
			}
			if dr.Error != nil && dr.Error.Kind == "internal" {
				t.Fatalf("do: a client's mistake filed as internal: %s", where)
			}
		}
		if bytes.Contains(got, e.secret) || strings.Contains(fmt.Sprint(resp.Header), string(e.secret)) {
			t.Fatalf("the file outside the root was served: %s", where)
		}
		if strings.Contains(logBuf.String(), s.Token) {
			t.Fatalf("the token is in the request log %q: %s", logBuf.String(), where)
		}
		if b, err := os.ReadFile(secretFile); err != nil || !bytes.Equal(b, e.secret) {
			t.Fatalf("the file outside the root changed (%v): %s", err, where)
		}
		if ents, err := os.ReadDir(e.dir); err != nil || len(ents) != 2 {
			t.Fatalf("something was made outside the root (%v, %v): %s", ents, err, where)
		}
	})
}
