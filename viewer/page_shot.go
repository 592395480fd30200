package viewer

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
)

func (s *Server) shot(w http.ResponseWriter, r *http.Request) {
	run, err := s.find(r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	name := r.PathValue("name")
	if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		s.fail(w, fmt.Errorf("%w: bad screenshot name", errBadRequest))
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable") // named by content hash
	s.shotFile(w, r, run.Dir, name)
}
