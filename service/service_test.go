package service

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/task"
)

func get(t *testing.T, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestStaticServesTheFolder(t *testing.T) {
	s, err := Start(context.Background(), "testdata/suite", []task.Service{{Name: "site", Static: "site"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	origin := s.Origins()["site"]
	if !strings.HasPrefix(origin, "http://127.0.0.1:") {
		t.Fatalf("origin %q", origin)
	}
	port := strings.TrimPrefix(origin, "http://127.0.0.1:")
	for _, tc := range []struct {
		url, want string
		code      int
	}{
		{origin + "/index.html", "hello", 200},
		{origin + "/sub/deep.txt", "deep", 200},
		{"http://localhost:" + port + "/sub/deep.txt", "deep", 200}, // the other site, for cross-origin frames
		{origin + "/../secret.txt", "", 404},
		{origin + "/missing.html", "", 404},
	} {
		code, body, h := get(t, tc.url)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d %q, want %d with %q", tc.url, code, body, tc.code, tc.want)
		}
		if code == 200 && h.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q", tc.url, h.Get("Cache-Control"))
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(origin + "/index.html"); err == nil {
		t.Error("the server still answers after Close")
	}
}

func TestStaticDoesNotFollowLinksOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "site"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/suite/secret.txt")
	if err := os.Symlink(abs, filepath.Join(dir, "site", "out.txt")); err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), dir, []task.Service{{Name: "site", Static: "site"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, body, _ := get(t, s.Origins()["site"]+"/out.txt"); code == 200 || strings.Contains(body, "secret") {
		t.Errorf("a link out of the folder was served: %d %q", code, body)
	}
}

func TestStartFails(t *testing.T) {
	_, err := Start(context.Background(), "testdata/suite", []task.Service{{Name: "site", Static: "nothere"}})
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "site") {
		t.Fatalf("err = %v, want ErrStart naming the service", err)
	}
}

func TestFill(t *testing.T) {
	s := &Set{origins: map[string]string{"site": "http://127.0.0.1:4321"}}
	tk := &task.Task{ID: "t", Instruction: "Open {{services.site}}/a.html", File: "t.yaml",
		Setup: []task.Step{{Open: &task.Open{URL: "{{ services.site }}/a.html?q=1"}}}}
	plain := &task.Task{ID: "p", Instruction: "nothing to fill"}
	out, err := s.Fill([]*task.Task{tk, plain})
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].Setup[0].Open.URL; got != "http://127.0.0.1:4321/a.html?q=1" {
		t.Errorf("open url = %q", got)
	}
	if got := out[0].Instruction; got != "Open http://127.0.0.1:4321/a.html" {
		t.Errorf("instruction = %q", got)
	}
	if out[0].File != "t.yaml" || tk.Setup[0].Open.URL != "{{ services.site }}/a.html?q=1" {
		t.Error("the copy lost its file, or the original was changed")
	}
	if out[1] != plain {
		t.Error("a task without services was copied")
	}
	tk.Instruction = "{{services.db}}"
	if _, err := s.Fill([]*task.Task{tk}); err == nil || !strings.Contains(err.Error(), "db") {
		t.Errorf("err = %v, want one naming the missing service", err)
	}
}
