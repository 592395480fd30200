package viewer

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-eval/proctor/store"
)

// episodeZip sends the episode as a zip: trajectory.json (the result and
// every step) and each step's screenshot, named by step.
func (s *Server) episodeZip(w http.ResponseWriter, r *http.Request) {
	run, res, steps, _, err := s.episodeData(r, false)
	if err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%d.zip"`, fileName(res.Task), res.Repeat))
	db, err := store.Open(run.Dir)
	if err != nil {
		s.fail(w, err)
		return
	}
	defer db.Close()
	// Each step's screenshot is shots/step-NNN.EXT, and the steps in
	// trajectory.json name those files; every file is dated when the
	// episode finished (the store keeps no time per step).
	when := zipTime(run, res)
	files := make([]string, len(steps))
	named := make([]store.Turn, len(steps))
	for i, st := range steps {
		named[i] = st
		if st.Shot != "" {
			ext := filepath.Ext(st.Shot)
			if ext == "" {
				ext = ".png"
			}
			files[i] = fmt.Sprintf("shots/step-%03d%s", st.Index, ext)
			named[i].Shot = files[i]
		}
	}
	zw := zip.NewWriter(w)
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: when})
	}
	traj, _ := json.MarshalIndent(map[string]any{"run": run.Report.Run, "result": res, "steps": named}, "", "  ")
	f, err := create("trajectory.json")
	if err == nil {
		_, err = f.Write(traj)
	}
	for i, st := range steps {
		if err != nil || files[i] == "" {
			continue
		}
		var b []byte
		if b, err = db.Shot(st.Shot); err != nil {
			break
		}
		var f2 io.Writer
		if f2, err = create(files[i]); err == nil {
			_, err = f2.Write(b)
		}
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		// Headers are sent; the truncated zip is the only signal left.
		fmt.Fprintf(os.Stderr, "proctor view: zip of %s: %v\n", res.Task, err)
	}
}

// zipTime dates the files of an episode's zip: when the episode finished,
// else when its run started, else now.
func zipTime(run *run, res store.Result) time.Time {
	switch {
	case !res.Finished.IsZero():
		return res.Finished
	case !run.Report.Run.Started.IsZero():
		return run.Report.Run.Started
	}
	return time.Now()
}
