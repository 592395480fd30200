// Package service runs the servers a suite declares (task.Service), and
// tells the tasks where they are.
//
// Static services (Set) run for the length of a run. Command services
// (Instances) run on each place of the pool, each from its own copy of
// its pristine data folder, restored before every episode.
//
// A static service is served by Proctor itself: Go's file server over the
// suite's folder, on a free port of the loopback interface. It answers as
// http://127.0.0.1:PORT, the origin tasks get, and as
// http://localhost:PORT, which a browser takes for another site: a page
// builds a cross-origin frame from its own port.
package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/task"
)

// Set is the running services of a suite.
type Set struct {
	origins map[string]string
	later   map[string]string // command services: their placeholders
	servers []*http.Server
	wg      sync.WaitGroup
}

// Start starts every service of the suite whose folder is dir. Close
// stops them.
func Start(ctx context.Context, dir string, svcs []task.Service) (*Set, error) {
	s := &Set{origins: map[string]string{}, later: map[string]string{}}
	for _, sv := range svcs {
		if sv.IsCommand() {
			// Started on each place (Instances); its placeholder stays
			// for the episode to fill.
			s.later[sv.Name] = "{{services." + sv.Name + "}}"
			continue
		}
		origin, err := s.static(ctx, dir, sv)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%w: %s: %v", ErrStart, sv.Name, err)
		}
		s.origins[sv.Name] = origin
	}
	return s, nil
}

// static serves the service's folder.
func (s *Set) static(ctx context.Context, dir string, sv task.Service) (string, error) {
	root := filepath.Join(dir, sv.Static)
	if st, err := os.Stat(root); err != nil {
		return "", err
	} else if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", root)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	lns := []net.Listener{ln}
	// localhost may resolve to ::1 first; answer there too where the
	// machine has IPv6 (a browser falls back to 127.0.0.1 otherwise).
	if ln6, err := lc.Listen(ctx, "tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
		lns = append(lns, ln6)
	}
	h, err := Static(root)
	if err != nil {
		ln.Close()
		return "", err
	}
	for _, l := range lns {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		s.wg.Go(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(os.Stderr, "proctor: service %s: %v\n", sv.Name, err)
			}
		})
	}
	return "http://127.0.0.1:" + strconv.Itoa(port), nil
}

// Static is the handler of a static service: the files under root, never
// cached, so that every episode loads the pages as shipped.
// Links out of the folder are not followed.
func Static(root string) (http.Handler, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	fs := http.FileServerFS(r.FS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		fs.ServeHTTP(w, r)
	}), nil
}

// Origins maps each service's name to its origin.
func (s *Set) Origins() map[string]string { return s.origins }

// Reachable lists the origins a browser reaches the services at: each
// also as http://localhost:PORT, which it answers too.
func (s *Set) Reachable() []string {
	var out []string
	for _, o := range s.origins {
		out = append(out, o, strings.Replace(o, "://127.0.0.1:", "://localhost:", 1))
	}
	sort.Strings(out)
	return out
}

// Close stops the services and waits for them.
func (s *Set) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Shutdown(ctx))
	}
	s.wg.Wait()
	return errors.Join(errs...)
}

// Fill returns the tasks with their static services' placeholders filled
// with the set's origins; those of command services are left for each
// episode to fill (Instances.Origins).
func (s *Set) Fill(tasks []*task.Task) ([]*task.Task, error) {
	all := map[string]string{}
	for n, o := range s.later {
		all[n] = o
	}
	for n, o := range s.origins {
		all[n] = o
	}
	out := make([]*task.Task, len(tasks))
	for i, t := range tasks {
		c, err := t.WithServices(all)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
