package xdesktop

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/snapshot"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

// plain hides the desktop's own listings: its snapshot goes through
// commands, as a guest's does over env/remote.
type plain struct{ env.Env }

func diffOf(t testing.TB, before, after *statediff.Snapshot) ([]string, []string) {
	t.Helper()
	d := statediff.Compare(before, after, nil, statediff.Allowed{}, statediff.Limits{})
	var got, filtered []string
	for _, c := range d.Changes {
		got = append(got, c.String())
	}
	for _, c := range d.Filtered {
		filtered = append(filtered, c.String())
	}
	sort.Strings(got)
	if len(d.Notes) > 0 {
		t.Errorf("notes: %q", d.Notes)
	}
	return got, filtered
}

// TestSnapshotDiff: on a real desktop, a snapshot taken again at once
// differs in nothing, and each kind of change is reported exactly, by the
// desktop's own listing and by the commands a guest's goes through.
func TestSnapshotDiff(t *testing.T) {
	need(t, "mousepad", "xclip")
	d := start(t)
	setup := env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/edit.txt", Content: "one\ntwo\n"}},
		{Write: &task.Write{Path: "~/gone.txt", Content: "bye\n"}},
		{Write: &task.Write{Path: "~/run.sh", Content: "#!/bin/sh\n"}},
	}}
	if err := d.Reset(ctx(t), setup); err != nil {
		t.Fatal(err)
	}
	for _, e := range []struct {
		name string
		e    env.Env
	}{{"own listing", d}, {"commands", plain{d}}} {
		before, err := snapshot.Take(ctx(t), e.e, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		again, err := snapshot.Take(ctx(t), e.e, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, filtered := diffOf(t, before, again); len(got)+len(filtered) > 0 {
			t.Fatalf("%s: a noop differs: %q, filtered %q", e.name, got, filtered)
		}
		if len(before.Items) < 4 {
			t.Fatalf("%s: listed %v", e.name, before.Items)
		}
	}
	before, _ := snapshot.Take(ctx(t), d, snapshot.Options{})
	plainBefore, _ := snapshot.Take(ctx(t), plain{d}, snapshot.Options{})
	res, err := d.Run(ctx(t), `set -e
echo new > ~/new.txt
printf 'one\n2\n' > ~/edit.txt
rm ~/gone.txt
chmod 755 ~/run.sh
mkdir -p ~/.cache/app && echo c > ~/.cache/app/x
printf secret | xclip -selection clipboard
sleep 600 >/dev/null 2>&1 &
mousepad ~/w.txt >/dev/null 2>&1 &
`, 10*time.Second)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if err := d.waitWindow(ctx(t), "w.txt", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // mousepad writes its settings as it starts
	want := []string{
		"changed content, size of file ~/edit.txt",
		"changed mode of file ~/run.sh (644 -> 755)",
		"changed value of clipboard clipboard",
		"created file ~/.local/share/Mousepad",
		"created file ~/new.txt",
		"created process mousepad " + d.Home() + "/w.txt",
		"created process sleep 600",
		"created process xclip -selection clipboard",
		"created window *" + d.Home() + "/w.txt - Mousepad",
		"deleted file ~/gone.txt",
	}
	for _, e := range []struct {
		name   string
		e      env.Env
		before *statediff.Snapshot
	}{{"own listing", d, before}, {"commands", plain{d}, plainBefore}} {
		after, err := snapshot.Take(ctx(t), e.e, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, filtered := diffOf(t, e.before, after)
		got = slices.DeleteFunc(got, func(s string) bool {
			return s == "created file ~/.config/Mousepad" || s == "created file ~/.config/Mousepad/accels.scm"
		})
		if !slices.Equal(got, want) {
			t.Errorf("%s: changes\n%q\nwant\n%q", e.name, got, want)
		}
		if !slices.Contains(filtered, "created file ~/.cache/app/x") {
			t.Errorf("%s: filtered %q, want the cache", e.name, filtered)
		}
	}
}

// BenchmarkSnapshotDiff measures the snapshots and diff of an episode
// against its reset: each round resets the desktop with a task's usual
// setup (files written, an editor opened), takes the snapshot after it,
// writes a file and takes the one after and the diff. It reports the
// medians.
func BenchmarkSnapshotDiff(b *testing.B) {
	need(b, "mousepad")
	d := start(b)
	setup := env.Setup{Steps: []task.Step{
		{Write: &task.Write{Path: "~/notes.txt", Content: "one\ntwo\n"}},
		{Launch: &task.Launch{App: "mousepad", Args: []string{"~/notes.txt"}, WaitWindow: "notes.txt"}},
	}}
	var resets, snaps []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := d.Reset(context.Background(), setup); err != nil {
			b.Fatal(err)
		}
		resets = append(resets, time.Since(start))
		start = time.Now()
		before, err := snapshot.Take(context.Background(), d, snapshot.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d.WriteFile(context.Background(), "~/out.txt", []byte("x"))
		after, err := snapshot.Take(context.Background(), d, snapshot.Options{})
		if err != nil {
			b.Fatal(err)
		}
		statediff.Compare(before, after, nil, statediff.Allowed{}, statediff.Limits{})
		snaps = append(snaps, time.Since(start))
	}
	reportMedians(b, resets, snaps)
}

func reportMedians(b *testing.B, resets, snaps []time.Duration) {
	med := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	r, s := med(resets), med(snaps)
	b.ReportMetric(r, "reset-ms")
	b.ReportMetric(s, "snapshot+diff-ms")
	b.ReportMetric(100*s/r, "%-of-reset")
}
