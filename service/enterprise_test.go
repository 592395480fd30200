package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// enterprise loads the enterprise suite, whose applications
// `proctor setup suites/enterprise` installs (scripts/test.sh runs it);
// the test is skipped where their data is missing.
func enterprise(tb testing.TB) *task.Suite {
	tb.Helper()
	s, _ := task.Load("../suites/enterprise")
	if s == nil {
		tb.Fatal("suites/enterprise does not load")
	}
	for _, sv := range s.Services {
		if _, err := os.Stat(s.DataPath(sv)); err != nil {
			tb.Skipf("the enterprise applications are not set up (%v): run proctor setup suites/enterprise", err)
		}
	}
	return s
}

// app is one application of the suite: how a record is made through its
// API, and the SQL that counts it.
type app struct {
	name   string
	create func(tb testing.TB, origin, name string)
	count  query.SQL // counts the records of the name %s
}

var apps = []app{
	{name: "tryton", create: createTrytonParty,
		count: query.SQL{DB: "proctor.sqlite", Query: "select count(*) as n from party_party where name = '%s'"}},
	{name: "rt", create: createRTTicket,
		count: query.SQL{DB: "rt.sqlite", Query: "select count(*) as n from Tickets where Subject = '%s'"}},
	{name: "redmine", create: createRedmineProject,
		count: query.SQL{DB: "redmine.sqlite3", Query: "select count(*) as n from projects where name = '%s'"}},
}

// call posts a JSON body and fails the test on a status other than want.
func call(tb testing.TB, req *http.Request, want int) []byte {
	tb.Helper()
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		tb.Fatalf("%s %s: %s: %s", req.Method, req.URL, res.Status, b)
	}
	return b
}

func post(tb testing.TB, url, body string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	return req
}

// createTrytonParty logs in over JSON-RPC and creates a party.
func createTrytonParty(tb testing.TB, origin, name string) {
	var login struct {
		Result []any `json:"result"`
	}
	b := call(tb, post(tb, origin+"/proctor/", `{"id":1,"method":"common.db.login","params":["admin",{"password":"proctor-admin"}]}`), 200)
	if err := json.Unmarshal(b, &login); err != nil || len(login.Result) != 2 {
		tb.Fatalf("tryton login: %s", b)
	}
	session := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("admin:%v:%v", login.Result[0], login.Result[1])))
	req := post(tb, origin+"/proctor/", fmt.Sprintf(`{"id":2,"method":"model.party.party.create","params":[[{"name":%q}],{}]}`, name))
	req.Header.Set("Authorization", "Session "+session)
	if b := call(tb, req, 200); strings.Contains(string(b), `"error"`) && !strings.Contains(string(b), `"error": null`) {
		tb.Fatalf("tryton create: %s", b)
	}
}

// createRTTicket creates a ticket through REST 2.
func createRTTicket(tb testing.TB, origin, name string) {
	req := post(tb, origin+"/REST/2.0/ticket", fmt.Sprintf(`{"Queue":"General","Subject":%q}`, name))
	req.SetBasicAuth("root", "password")
	call(tb, req, 201)
}

// createRedmineProject creates a project through the REST API.
func createRedmineProject(tb testing.TB, origin, name string) {
	req := post(tb, origin+"/projects.json", fmt.Sprintf(`{"project":{"name":%q,"identifier":"isolation-probe"}}`, name))
	req.Header.Set("X-Redmine-API-Key", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678")
	call(tb, req, 201)
}

// count counts the records of the name in the app's database.
func (a app) countOf(tb testing.TB, in *Instances, name string) string {
	tb.Helper()
	q := a.count
	q.Service, q.Query = a.name, fmt.Sprintf(q.Query, name)
	v, _, err := in.Query(context.Background(), query.Service{SQL: &q})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// TestEnterpriseIsolation proves, on each real application, that a record
// made through its API in one episode is not there in the next.
func TestEnterpriseIsolation(t *testing.T) {
	s := enterprise(t)
	for _, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			in := NewInstances(s)
			defer in.Close()
			ctx := context.Background()
			if err := in.Reset(ctx, []string{a.name}); err != nil {
				t.Fatal(err)
			}
			const name = "Isolation probe"
			if got := a.countOf(t, in, name); got != `[{"n":0}]` {
				t.Fatalf("the pristine data holds %s", got)
			}
			a.create(t, in.Origins()[a.name], name)
			if got := a.countOf(t, in, name); got != `[{"n":1}]` {
				t.Fatalf("after creating it through the API: %s", got)
			}
			if err := in.Reset(ctx, []string{a.name}); err != nil {
				t.Fatal(err)
			}
			if got := a.countOf(t, in, name); got != `[{"n":0}]` {
				t.Fatalf("the next episode sees the record: %s", got)
			}
		})
	}
}

// BenchmarkEnterpriseReset measures the reset of each application (kill,
// fresh copy of the pristine data, start, ready) as an episode waits for
// it: between episodes, where the spare started during the last episode
// (the benchmark waits as an episode would), and back to back, where the
// reset waits for the spare to start; it reports the median and the
// slowest (bench/services.sh runs it 20 times).
func BenchmarkEnterpriseReset(b *testing.B) {
	s := enterprise(b)
	for _, a := range apps {
		for _, between := range []bool{true, false} {
			name := a.name + "/between-episodes"
			if !between {
				name = a.name + "/back-to-back"
			}
			b.Run(name, func(b *testing.B) {
				in := NewInstances(s)
				defer in.Close()
				ctx := context.Background()
				if err := in.Reset(ctx, []string{a.name}); err != nil {
					b.Fatal(err)
				}
				var ds []time.Duration
				for b.Loop() {
					if between {
						b.StopTimer()
						<-in.spare[a.name].done // an episode's time
						b.StartTimer()
					}
					start := time.Now()
					if err := in.Reset(ctx, []string{a.name}); err != nil {
						b.Fatal(err)
					}
					ds = append(ds, time.Since(start))
				}
				sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
				b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
				b.ReportMetric(float64(slices.Max(ds).Microseconds())/1000, "max-ms")
			})
		}
	}
}
