package viewer

import (
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/store"
)

// Export writes a run as a static site in dir, which opens from disk
// (index.html) and can be shared: the run's page with every episode (one
// page, unpaginated), each episode's page with its screenshots, its
// animated GIF and its zip, and the style and script. Links within the
// run become relative; links the static copy cannot serve (other runs,
// comparisons, filters and searches, which need the server) are left
// out. Reviews are shown as they are; the copy records none. progress,
// when not nil, is told each page written.
func Export(runDir, dir string, progress io.Writer) error {
	if _, err := os.Stat(filepath.Join(runDir, store.DBFile)); err != nil {
		return fmt.Errorf("%s: no run there (%v)", runDir, err)
	}
	runDir = filepath.Clean(runDir)
	s := &Server{Root: runDir, PageSize: 1 << 30} // read-only, one page
	rn, err := s.load(runDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "episode"), 0o755); err != nil {
		return err
	}
	h := s.Handler()
	get := func(target string) ([]byte, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("%s: %d %s", target, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
		return rec.Body.Bytes(), nil
	}
	base := "/run/" + url.PathEscape(rn.ID)
	write := func(name string, b []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if progress != nil {
			fmt.Fprintf(progress, "%s\n", p)
		}
		return os.WriteFile(p, b, 0o644)
	}
	// The run's page.
	b, err := get(base)
	if err != nil {
		return err
	}
	if err := write("index.html", withPolicy(relink(b, rn.ID, ""))); err != nil {
		return err
	}
	// Each episode's page, GIF and zip.
	for _, res := range rn.Report.Results {
		q := url.Values{"task": {res.Task}, "repeat": {strconv.Itoa(res.Repeat)}}.Encode()
		name := episodeFile(res.Task, res.Repeat)
		if b, err = get(base + "/episode?" + q); err != nil {
			return err
		}
		if err := write("episode/"+name+".html", withPolicy(relink(b, rn.ID, "../"))); err != nil {
			return err
		}
		if b, err = get(base + "/episode.zip?" + q); err != nil {
			return err
		}
		if err := write("episode/"+name+".zip", b); err != nil {
			return err
		}
		if b, err = get(base + "/episode.gif?" + q); err == nil {
			if err := write("episode/"+name+".gif", b); err != nil {
				return err
			}
		}
	}
	// The screenshots (regular files of the run folder, never what a
	// link leads to), the style and the script.
	shots := filepath.Join(runDir, store.ShotDir)
	entries, err := os.ReadDir(shots)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		b, err := readShot(runDir, e.Name())
		if errors.Is(err, store.ErrNotShot) {
			continue
		}
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, "shot"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "shot", e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	static, err := fs.Sub(webFS, "web/static")
	if err != nil {
		return err
	}
	return fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		return write(path.Join("static", p), b)
	})
}

// episodeFile names an episode's files in the export.
func episodeFile(task string, repeat int) string {
	return fmt.Sprintf("%s-%d", fileName(task), repeat)
}

var linkRE = regexp.MustCompile(`(href|src|action)="(/[^"]*)"`)

// relink rewrites a page's links to the export's files, up being the way
// from the page to the export's top ("" or "../"). A link to what the
// export does not hold is left without its target.
func relink(page []byte, runID, up string) []byte {
	base := "/run/" + url.PathEscape(runID)
	return linkRE.ReplaceAllFunc(page, func(m []byte) []byte {
		sub := linkRE.FindSubmatch(m)
		attr, target := string(sub[1]), html.UnescapeString(string(sub[2]))
		to := ""
		switch u, err := url.Parse(target); {
		case err != nil:
		case strings.HasPrefix(u.Path, "/static/"):
			to = up + "static/" + strings.TrimPrefix(u.Path, "/static/")
		case strings.HasPrefix(u.Path, base+"/shot/"):
			to = up + "shot/" + path.Base(u.Path)
		case u.Path == base+"/episode" || u.Path == base+"/episode.gif" || u.Path == base+"/episode.zip":
			repeat, _ := strconv.Atoi(u.Query().Get("repeat"))
			ext := map[string]string{"episode": ".html", "episode.gif": ".gif", "episode.zip": ".zip"}[path.Base(u.Path)]
			to = up + "episode/" + episodeFile(u.Query().Get("task"), repeat) + ext
			if u.Fragment != "" {
				to += "#" + u.Fragment
			}
		case u.Path == base && u.RawQuery == "":
			to = up + "index.html"
		}
		if to == "" {
			if attr == "href" {
				return []byte(`data-static="not in the static copy"`)
			}
			return []byte(attr + `=""`)
		}
		return []byte(attr + `="` + html.EscapeString(to) + `"`)
	})
}
