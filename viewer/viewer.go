// Package viewer serves run folders as web pages: a leaderboard of runs
// with plots, a comparison of runs task by task, each run's episodes with
// human reviews and the human-versus-automatic disagreement rate, and each
// episode's checks, milestones and trajectory, step by step with the
// actions drawn on the screenshots. Pages are rendered on the server with
// html/template; the assets are embedded, so the viewer works offline.
package viewer

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/report"
	"github.com/proctor-eval/proctor/store"
)

//go:embed web
var webFS embed.FS

// DefaultPageSize is how many episodes a run page lists at once.
const DefaultPageSize = 100

// Server serves the runs under Root.
type Server struct {
	// Root is a run folder, or a folder whose subfolders are run folders.
	Root string
	// Token, when set, lets a reviewer record verdicts (sent as the form
	// field token or an Authorization: Bearer header). Without it the
	// viewer is read-only.
	Token string
	// PageSize is the number of episodes per page (DefaultPageSize if 0).
	PageSize int
	// Addr is the address the viewer listens on (host:port). When set, a
	// request whose Host header names another host is refused (against
	// DNS rebinding): the viewer answers as Addr, as localhost and the
	// loopback addresses when it listens on loopback, as any address and
	// the machine's name when on every interface, and as the names of
	// Hosts (host or host:port; a proxy's name in front of it).
	Addr  string
	Hosts []string

	once  sync.Once
	pages map[string]*template.Template
	err   error

	mu    sync.Mutex
	cache map[string]*cached       // run folder -> loaded report, while unchanged
	plots map[string]template.HTML // rendered plots, by the runs and their stamps
	// pairs are the paired comparisons, by the runs and their stamps.
	pairs map[string]*report.Comparison
}

// cached is a run's report, valid while its database is unchanged.
type cached struct {
	stamp  string
	report *report.Report
}

// run is a run folder with its figures and reviews.
type run struct {
	ID      string
	Dir     string
	Report  *report.Report
	Reviews map[store.ReviewKey]store.Review
	stamp   string // of the database the report was read from
}

func (s *Server) pageSize() int {
	if s.PageSize > 0 {
		return s.PageSize
	}
	return DefaultPageSize
}

// Handler returns the viewer's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFS, "web/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.leaderboard)
	mux.HandleFunc("GET /compare", s.compare)
	mux.HandleFunc("GET /side", s.side)
	mux.HandleFunc("GET /search", s.search)
	mux.HandleFunc("GET /run/{id}", s.runPage)
	mux.HandleFunc("GET /run/{id}/episode", s.episode)
	mux.HandleFunc("GET /run/{id}/live", s.live)
	mux.HandleFunc("GET /run/{id}/episode.zip", s.episodeZip)
	mux.HandleFunc("GET /run/{id}/episode.gif", s.episodeGIF)
	mux.HandleFunc("GET /run/{id}/shot/{name}", s.shot)
	mux.HandleFunc("POST /run/{id}/review", s.review)
	return securityHeaders(s.hostGuard(mux))
}

// securityHeaders keeps pages from being framed or loading outside code.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", policy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// runDirs lists the run folders under Root: Root itself when it holds a
// results database, else its subfolders that do.
func (s *Server) runDirs() ([]string, error) {
	if _, err := os.Stat(filepath.Join(s.Root, store.DBFile)); err == nil {
		return []string{s.Root}, nil
	}
	entries, err := os.ReadDir(s.Root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(s.Root, e.Name()) // folders and links to folders
		if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
			out = append(out, dir)
		}
	}
	return out, nil
}

// stamp changes whenever a run's database (or its write-ahead log) does.
func stamp(dir string) string {
	var b strings.Builder
	for _, f := range []string{store.DBFile, store.DBFile + "-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			fmt.Fprintf(&b, "%d.%d;", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// load reads a run folder's report (from the cache while unchanged) and
// its reviews.
func (s *Server) load(dir string) (*run, error) {
	st := stamp(dir)
	s.mu.Lock()
	c := s.cache[dir]
	s.mu.Unlock()
	var rep *report.Report
	if c != nil && c.stamp == st {
		rep = c.report
	} else {
		var err error
		if rep, err = report.Load(dir); err != nil {
			return nil, err
		}
		rep.Analyse(report.DefaultStatOptions()) // the intervals proctor report gives by default
		s.mu.Lock()
		if s.cache == nil {
			s.cache = map[string]*cached{}
		}
		s.cache[dir] = &cached{stamp: st, report: rep}
		s.mu.Unlock()
	}
	db, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	reviews, err := db.Reviews()
	if err != nil {
		return nil, err
	}
	return &run{ID: filepath.Base(dir), Dir: dir, Report: rep, Reviews: reviews, stamp: st}, nil
}

// runs loads every run, newest first; folders that hold no run are skipped.
func (s *Server) runs() ([]*run, error) {
	dirs, err := s.runDirs()
	if err != nil {
		return nil, err
	}
	var out []*run
	for _, d := range dirs {
		r, err := s.load(d)
		if errors.Is(err, store.ErrNoRun) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Report.Run.Started.After(out[j].Report.Run.Started) })
	return out, nil
}

// find loads the run with the id (its folder's name).
func (s *Server) find(id string) (*run, error) {
	dirs, err := s.runDirs()
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if filepath.Base(d) == id {
			return s.load(d)
		}
	}
	return nil, errNotFound
}

var errNotFound = errors.New("not found")

// fail writes an error page with the right status.
func (s *Server) fail(w http.ResponseWriter, err error) {
	code := statusOf(err)
	s.render(w, code, "error", map[string]any{"Title": http.StatusText(code), "Code": code, "Message": err.Error()})
}

// statusOf is the HTTP status of an error.
func statusOf(err error) int {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, errNotFound), errors.Is(err, os.ErrNotExist):
		code = http.StatusNotFound
	case errors.Is(err, errReadOnly):
		code = http.StatusForbidden
	case errors.Is(err, errBadToken):
		code = http.StatusUnauthorized
	case errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	}
	return code
}

var (
	errReadOnly   = errors.New("this viewer is read-only: start it with --token to record reviews")
	errBadToken   = errors.New("the review token is missing or wrong")
	errBadRequest = errors.New("bad request")
)

// authorized checks the review token of a request.
func (s *Server) authorized(r *http.Request) error {
	if s.Token == "" {
		return errReadOnly
	}
	got := r.PostFormValue("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
		return errBadToken
	}
	return nil
}

// render executes a page template.
func (s *Server) render(w http.ResponseWriter, code int, page string, data any) {
	s.once.Do(s.parse)
	if s.err != nil {
		http.Error(w, s.err.Error(), http.StatusInternalServerError)
		return
	}
	t, ok := s.pages[page]
	if !ok {
		http.Error(w, "no page "+page, http.StatusInternalServerError)
		return
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprint(w, b.String())
}

// parse reads each page template with the shared layout.
func (s *Server) parse() {
	s.pages = map[string]*template.Template{}
	for _, p := range []string{"leaderboard", "compare", "run", "episode", "side", "live", "search", "error"} {
		t, err := template.New(p).Funcs(funcs).ParseFS(webFS, "web/layout.html", "web/"+p+".html")
		if err != nil {
			s.err = err
			return
		}
		s.pages[p] = t
	}
}

var funcs = template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"dur": func(d time.Duration) string {
		if d < time.Second {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(100 * time.Millisecond).String()
	},
	"money":        func(f float64) string { return fmt.Sprintf("$%.4f", f) },
	"num":          func(f float64) string { return fmt.Sprintf("%.0f", f) },
	"date":         func(t time.Time) string { return t.Format("2006-01-02 15:04") },
	"time":         func(t time.Time) string { return t.Format("2006-01-02 15:04:05") },
	"add":          func(a, b int) int { return a + b },
	"join":         strings.Join,
	"plural":       plural,
	"short":        shorten,
	"icon":         icon,
	"shortVersion": shortVersion,
	"aspect":       aspect,
}

// plural counts n things: "1 episode", "2 episodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
