package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/snapshot"
	"github.com/proctor-eval/proctor/statediff"
)

var update = flag.Bool("update", false, "rewrite the golden files of the row diffs")

// rowSnapshot lists the rows of the running application's database.
func rowSnapshot(t *testing.T, in *Instances, name string) *statediff.Snapshot {
	t.Helper()
	files := in.Databases(name)
	if len(files) != 1 {
		t.Fatalf("the databases of %s: %q", name, files)
	}
	s := &statediff.Snapshot{Type: "browser", Items: []statediff.Item{}}
	if err := snapshot.Rows(context.Background(), s, snapshot.Database{Service: name, File: files[0]}, statediff.NewBudget(statediff.Limits{})); err != nil {
		t.Fatal(err)
	}
	return s
}

// request sends a request of an episode's step and fails the test on an
// error status; it returns the status and the start of the body.
func request(t *testing.T, method, url, body string, auth func(*http.Request)) string {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%d ", res.StatusCode)
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf)
	b.Write(buf[:n])
	if res.StatusCode >= 400 {
		t.Fatalf("%s %s: %s", method, url, b.String())
	}
	return b.String()
}

// tryton logs in over JSON-RPC and calls a method of the model.
func tryton(t *testing.T, origin, method, params string) {
	t.Helper()
	var login struct {
		Result []any `json:"result"`
	}
	out := request(t, "POST", origin+"/proctor/", `{"id":1,"method":"common.db.login","params":["admin",{"password":"proctor-admin"}]}`, nil)
	if err := json.Unmarshal([]byte(strings.TrimPrefix(out, "200 ")), &login); err != nil || len(login.Result) != 2 {
		t.Fatalf("tryton login: %s", out)
	}
	session := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "admin:%v:%v", login.Result[0], login.Result[1]))
	out = request(t, "POST", origin+"/proctor/", fmt.Sprintf(`{"id":2,"method":%q,"params":%s}`, method, params),
		func(r *http.Request) { r.Header.Set("Authorization", "Session "+session) })
	if strings.Contains(out, `"error"`) && !strings.Contains(out, `"error": null`) {
		t.Fatalf("tryton %s: %s", method, out)
	}
}

func rtAuth(r *http.Request) { r.SetBasicAuth("root", "password") }
func redmineAuth(r *http.Request) {
	r.Header.Set("X-Redmine-API-Key", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678")
}

// rowSteps are an episode's steps on each application: the first logs in
// and reads (a noop), the others insert, change and delete records
// through the application's API.
var rowSteps = map[string][]struct {
	name string
	do   func(t *testing.T, origin string)
}{
	"tryton": {
		{"noop", func(t *testing.T, o string) {
			tryton(t, o, "model.party.party.search_read", `[[["id","<",5]],0,10,null,["name"],{}]`)
		}},
		{"insert", func(t *testing.T, o string) {
			tryton(t, o, "model.party.party.create", `[[{"name":"Row diff probe"}],{}]`)
		}},
		{"change", func(t *testing.T, o string) {
			tryton(t, o, "model.party.party.write", `[[210],{"name":"Row diff probe, renamed"},{}]`)
		}},
		{"delete", func(t *testing.T, o string) { tryton(t, o, "model.party.party.delete", `[[210],{}]`) }},
	},
	"rt": {
		{"noop", func(t *testing.T, o string) {
			request(t, "GET", o+"/?user=root&pass=password", "", nil)
			request(t, "GET", o+"/REST/2.0/ticket/1", "", rtAuth)
		}},
		{"insert", func(t *testing.T, o string) {
			request(t, "POST", o+"/REST/2.0/ticket", `{"Queue":"General","Subject":"Row diff probe"}`, rtAuth)
		}},
		{"change", func(t *testing.T, o string) { request(t, "PUT", o+"/REST/2.0/ticket/1", `{"Priority":77}`, rtAuth) }},
		// Request Tracker deletes no ticket: a deleted ticket's status is
		// "deleted". A row deleted is a watcher taken off a ticket.
		{"delete", func(t *testing.T, o string) { request(t, "DELETE", o+"/REST/2.0/ticket/301", "", rtAuth) }},
	},
	"redmine": {
		{"noop", func(t *testing.T, o string) {
			request(t, "GET", o+"/login", "", nil)
			request(t, "GET", o+"/issues/1.json", "", redmineAuth)
		}},
		{"insert", func(t *testing.T, o string) {
			request(t, "POST", o+"/issues.json", `{"issue":{"project_id":1,"subject":"Row diff probe"}}`, redmineAuth)
		}},
		{"change", func(t *testing.T, o string) {
			request(t, "PUT", o+"/issues/1.json", `{"issue":{"subject":"Add an audit log for admin actions"}}`, redmineAuth)
		}},
		{"delete", func(t *testing.T, o string) { request(t, "DELETE", o+"/issues/300.json", "", redmineAuth) }},
	},
}

// TestEnterpriseRowDiff lists the rows of each real application's
// database before and after each step of an episode: one that only logs
// in and reads changes nothing once the noise is filtered; an insert, a
// change and a delete through the application's API are reported as the
// golden files (testdata/rowdiff/APP-STEP.txt, -update rewrites them)
// say, row by row and column by column.
func TestEnterpriseRowDiff(t *testing.T) {
	s := enterprise(t)
	for _, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			in := NewInstances(s)
			defer in.Close()
			if err := in.Reset(context.Background(), []string{a.name}); err != nil {
				t.Fatal(err)
			}
			before := rowSnapshot(t, in, a.name)
			if got := before.Apps[a.name]; got == "" {
				t.Fatalf("the application of %s is not recognized", a.name)
			}
			for _, step := range rowSteps[a.name] {
				step.do(t, in.Origins()[a.name])
				after := rowSnapshot(t, in, a.name)
				d := statediff.Compare(before, after, nil, statediff.Allowed{}, statediff.Limits{})
				if step.name == "noop" && len(d.Changes) != 0 {
					t.Errorf("an episode that logs in and reads changed: %q", changeNames(d.Changes))
				}
				golden(t, filepath.Join("testdata", "rowdiff", a.name+"-"+step.name+".txt"), rowReport(d))
				before = rowSnapshot(t, in, a.name)
			}
		})
	}
}

// clock matches the times an application takes from the clock (a ticket's
// Started), which differ from run to run.
var clock = regexp.MustCompile(`"20[0-9][0-9]-[0-9]{2}-[0-9]{2}T[0-9:.]+Z"`)

// rowReport is a diff's changes, a line each, then the filtered ones,
// with the text diff of each changed row (times from the clock as TIME).
func rowReport(d *statediff.Diff) string {
	var b strings.Builder
	for _, c := range d.Changes {
		b.WriteString(c.String() + "\n")
		if c.Op == statediff.Changed {
			for l := range strings.SplitSeq(c.TextDiff, "\n") {
				if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
					b.WriteString("    " + clock.ReplaceAllString(l, "TIME") + "\n")
				}
			}
		}
	}
	for _, c := range d.Filtered {
		b.WriteString("filtered: " + c.String() + " (" + c.Filtered + ")\n")
	}
	return b.String()
}

func changeNames(cs []statediff.Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-update rewrites it):\n got:\n%s\nwant:\n%s", file, got, want)
	}
}

// BenchmarkRowSnapshot lists the rows of each application's pristine
// database, as an episode's snapshot does twice, and compares them.
func BenchmarkRowSnapshot(b *testing.B) {
	s := enterprise(b)
	for _, sv := range s.Services {
		dir := s.DataPath(sv)
		var file string
		filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() && isSQLite(p) {
				file = p
			}
			return nil
		})
		b.Run(sv.Name, func(b *testing.B) {
			for b.Loop() {
				var snaps [2]*statediff.Snapshot
				for i := range snaps {
					snaps[i] = &statediff.Snapshot{Type: "browser"}
					if err := snapshot.Rows(context.Background(), snaps[i], snapshot.Database{Service: sv.Name, File: file}, statediff.NewBudget(statediff.Limits{})); err != nil {
						b.Fatal(err)
					}
				}
				statediff.Compare(snaps[0], snaps[1], nil, statediff.Allowed{}, statediff.Limits{})
			}
		})
	}
}
