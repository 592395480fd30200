package browser

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/snapshot"
	"github.com/proctor-eval/proctor/statediff"
)

const postPage = `<!doctype html><title>Send</title>
<form method=post action=/send><input name=to value=all><input name=msg value=hi><button>Send</button></form>`

// TestSnapshotDiff: a browser's snapshot taken again at once differs in
// nothing, and a cookie set, local storage written and a form posted are
// reported exactly, with the form's fields.
func TestSnapshotDiff(t *testing.T) {
	b := start(t)
	u := site(t, map[string]string{"p": postPage, "send": "<title>Sent</title>sent"})
	open(t, b, u+"/p")
	ctx := testCtx(t)
	before, err := snapshot.Take(ctx, b, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := snapshot.Take(ctx, b, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := statediff.Compare(before, again, nil, statediff.Allowed{}, statediff.Limits{}); len(d.Changes)+len(d.Filtered)+len(d.Notes) > 0 {
		t.Fatalf("a noop differs: %+v", d)
	}
	before, _ = snapshot.Take(ctx, b, snapshot.Options{})
	eval(t, b, `document.cookie = "sid=abc; path=/"; localStorage.setItem("k", "v"); document.forms[0].submit(); "ok"`)
	for deadline := time.Now().Add(20 * time.Second); ; {
		tabs, err := b.Tabs(ctx)
		if err == nil && len(tabs) == 1 && tabs[0].URL == u+"/send" && tabs[0].Title == "Sent" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the form was not sent: %v %v", tabs, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after, err := snapshot.Take(ctx, b, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := statediff.Compare(before, after, nil, statediff.Allowed{Origins: []string{"http://127.0.0.1:*"}}, statediff.Limits{})
	var got []string
	for _, c := range d.Changes {
		got = append(got, c.String())
		if c.Allowed == "" {
			t.Errorf("%s is not allowed by http://127.0.0.1:*", c)
		}
		if c.Kind == statediff.Request && c.After.Value != "msg=hi\nto=all" {
			t.Errorf("the form's fields: %q", c.After.Value)
		}
	}
	sort.Strings(got)
	o := statediff.OriginOf(u)
	want := []string{"created cookie 127.0.0.1 / sid", "created local_storage " + o + " k", "created request POST " + u + "/send",
		"created tab " + u + "/send", "deleted tab " + u + "/p"}
	if !slices.Equal(got, want) || len(d.Notes) > 0 {
		t.Errorf("changes\n%q\nwant\n%q\nnotes %q", got, want, d.Notes)
	}
}

// BenchmarkSnapshotDiff measures the snapshots and diff of an episode
// against its reset, on a page with a form, and reports the medians:
// the reset, the snapshot taken at once after it (as an episode takes
// it), the snapshot at the episode's end and the diff, and, every other
// iteration, a snapshot of an idle browser. Each iteration starts once
// the last one's background work (the next episode's context opened) is
// done, as an episode's steps give it time to.
func BenchmarkSnapshotDiff(b *testing.B) {
	br := start(b)
	u := site(b, map[string]string{"p": postPage})
	var resets, firsts, snaps, idle []time.Duration
	take := func() *statediff.Snapshot {
		s, err := snapshot.Take(testCtx(b), br, snapshot.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	settle := func() {
		for br.openingSpare() {
			time.Sleep(time.Millisecond)
		}
	}
	for i := 0; b.Loop(); i++ {
		settle()
		t0 := time.Now()
		open(b, br, u+"/p")
		resets = append(resets, time.Since(t0))
		if i%2 == 1 {
			if _, err := br.Screenshot(testCtx(b), env.ShotOptions{}); err != nil {
				b.Fatal(err)
			}
			settle()
			t1 := time.Now()
			take()
			idle = append(idle, time.Since(t1))
			continue
		}
		t1 := time.Now()
		before := take()
		first := time.Since(t1)
		if _, err := br.Screenshot(testCtx(b), env.ShotOptions{}); err != nil { // the agent's first screen
			b.Fatal(err)
		}
		settle() // the episode's steps
		t1 = time.Now()
		statediff.Compare(before, take(), nil, statediff.Allowed{}, statediff.Limits{})
		firsts = append(firsts, first)
		snaps = append(snaps, first+time.Since(t1))
	}
	med := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	if len(idle) == 0 {
		return
	}
	r, s := med(resets), med(snaps)
	b.ReportMetric(r, "reset-ms")
	b.ReportMetric(s, "snapshot+diff-ms")
	b.ReportMetric(100*s/r, "%-of-reset")
	b.ReportMetric(med(firsts), "first-snapshot-ms")
	b.ReportMetric(med(idle), "snapshot-idle-ms")
}
