package android_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
	"github.com/proctor-eval/proctor/snapshot"
	"github.com/proctor-eval/proctor/statediff"
	"github.com/proctor-eval/proctor/task"
)

func TestParseSettings(t *testing.T) {
	got := android.ParseSettings("a=1\nb=\nc=x=y\nline one\nline two\n")
	want := [][2]string{{"a", "1"}, {"b", ""}, {"c", "x=y\nline one\nline two"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStateDiffOverADB snapshots the stand-in's phone over Debian's adb
// server (the path of a real device) after its reset and after an
// episode: a noop changes nothing; settings put and deleted, packages
// installed and removed and files made, changed and deleted on shared
// storage, and a content provider's rows inserted, changed and deleted,
// are each reported, and nothing else.
func TestStateDiffOverADB(t *testing.T) {
	addr := adbtest.UseServer(t)
	ph := phonetest.New(t, 1080, 2340)
	phonetest.InstallProBench(ph)
	ph.Settings["global/airplane_mode_on"] = "0"
	ph.Settings["system/font_scale"] = "1.0"
	ph.Settings["secure/location_mode"] = "3"
	ph.Settings["system/screen_brightness"] = "102"
	ph.SetFile("/sdcard/Documents/plan.txt", "plan")
	ph.SetFile("/sdcard/Download/old.pdf", "%PDF")
	for _, m := range []string{
		"--bind address:s:+15550101 --bind body:s:'Your code is 4711' --bind read:i:0 --bind seen:i:0 --bind type:i:1",
		"--bind address:s:+15550102 --bind body:s:'Lunch, tomorrow?' --bind read:i:0 --bind seen:i:0 --bind type:i:1",
		"--bind address:s:+15550103 --bind body:s:'Parcel due' --bind read:i:0 --bind seen:i:0 --bind type:i:1",
	} {
		if out, _, code := ph.Handle("content insert --uri content://sms "+m, nil); code != 0 {
			t.Fatalf("content insert %s: %s", m, out)
		}
	}
	dev := adbtest.Start(t, adbtest.Options{Shell: ph.Handle, FS: ph})
	c := &adb.Client{Addr: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Connect(ctx, dev.Addr()); err != nil {
		t.Fatal(err)
	}
	if err := c.Device(dev.Addr()).WaitFor(ctx, "device"); err != nil {
		t.Fatal(err)
	}
	e := android.New(android.Over(c, dev.Addr()), dev.Addr())
	if err := e.Reset(ctx, env.Setup{Type: android.Kind}); err != nil {
		t.Fatal(err)
	}
	take := func() *statediff.Snapshot {
		t.Helper()
		s, err := snapshot.Take(ctx, e, snapshot.Options{Watch: []string{"content://sms"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Notes) > 0 {
			t.Errorf("notes: %q", s.Notes)
		}
		return s
	}
	before := take()
	kinds := map[statediff.Kind]int{}
	for _, it := range before.Items {
		kinds[it.Kind]++
	}
	if kinds[statediff.Setting] != 4 || kinds[statediff.Package] != 3 || kinds[statediff.File] < 4 || kinds[statediff.Row] != 3 {
		t.Fatalf("the snapshot lists %v", kinds)
	}
	d := statediff.Compare(before, take(), nil, statediff.Allowed{}, statediff.Limits{})
	if len(d.Changes)+len(d.Filtered) != 0 {
		t.Fatalf("a noop changed %q, filtered %q", changeStrings(d.Changes), changeStrings(d.Filtered))
	}

	before = take()
	if err := e.WriteFile(ctx, "/data/local/tmp/maps.apk", phonetest.APK("org.example.maps", "Maps")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"settings put global airplane_mode_on 1",
		"settings delete system font_scale",
		"settings put secure lock_screen_show_notifications 0",
		"settings put system screen_brightness 40",
		"pm uninstall " + phonetest.ShopApp,
		"pm install /data/local/tmp/maps.apk",
		"rm /data/local/tmp/maps.apk",
		"echo new > /sdcard/Download/new.txt",
		"echo changed > /sdcard/Documents/plan.txt",
		"rm /sdcard/Download/old.pdf",
		"content insert --uri content://sms --bind address:s:+15550104 --bind body:s:'On my way' --bind type:i:2",
		"content update --uri content://sms --bind read:i:1 --bind seen:i:1 --where \"address='+15550101'\"",
		"content update --uri content://sms/2 --bind seen:i:1",
		"content delete --uri content://sms --where 'body LIKE \"Parcel%\"'",
	} {
		res, err := e.Run(ctx, cmd, 10*time.Second)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %v %+v", cmd, err, res)
		}
	}
	d = statediff.Compare(before, take(), nil, statediff.Allowed{Settings: []string{"global/*"}, Paths: []string{"~/Download/**"}}, statediff.Limits{})
	want := []string{
		"changed content, size of file ~/Documents/plan.txt",
		"changed value of setting global/airplane_mode_on (allowed)",
		"created file ~/Download/new.txt (allowed)",
		"created package org.example.maps",
		"created setting secure/lock_screen_show_notifications",
		"deleted file ~/Download/old.pdf (allowed)",
		"deleted package " + phonetest.ShopApp,
		"deleted setting system/font_scale",
		"changed read of row content://sms _id=1",
		"created row content://sms _id=4",
		"deleted row content://sms _id=3",
	}
	got := changeStrings(d.Changes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
	if f := changeStrings(d.Filtered); !slices.Equal(f, []string{"changed seen of row content://sms _id=2", "changed value of setting system/screen_brightness"}) {
		t.Errorf("filtered: %q", f)
	}
}

func changeStrings(cs []statediff.Change) []string {
	out := []string{}
	for _, c := range cs {
		s := c.String()
		if c.Allowed != "" {
			s += " (allowed)"
		}
		out = append(out, s)
	}
	return out
}

func TestParseContentRows(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      [][][2]string
	}{
		{"none", "No result found.\n", nil},
		{"rows", "Row: 0 _id=1, address=+1555, body=hi\nRow: 1 _id=2, address=NULL, body=\n",
			[][][2]string{{{"_id", "1"}, {"address", "+1555"}, {"body", "hi"}}, {{"_id", "2"}, {"address", "NULL"}, {"body", ""}}}},
		{"comma in a value", "Row: 0 _id=1, body=Lunch, tomorrow?, read=0\n",
			[][][2]string{{{"_id", "1"}, {"body", "Lunch, tomorrow?"}, {"read", "0"}}}},
		{"line break in a value", "Row: 0 _id=1, body=one\ntwo, read=1\n",
			[][][2]string{{{"_id", "1"}, {"body", "one\ntwo"}, {"read", "1"}}}},
		{"equals in a value", "Row: 0 name=a=b, value=c\n", [][][2]string{{{"name", "a=b"}, {"value", "c"}}}},
		{"not a row", "Error while accessing provider:sms\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := android.ParseContentRows(c.out)
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if !slices.Equal(got[i], c.want[i]) {
					t.Errorf("row %d: got %q, want %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

func FuzzParseContentRows(f *testing.F) {
	f.Add("Row: 0 _id=1, address=+1555, body=hi, there\nRow: 1 _id=2, body=\nx\n")
	f.Add("No result found.\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, row := range android.ParseContentRows(out) {
			if len(row) == 0 {
				t.Fatalf("an empty row from %q", out)
			}
			for _, kv := range row {
				if kv[0] == "" || !strings.Contains(out, kv[0]+"=") {
					t.Fatalf("column %q not in %q", kv[0], out)
				}
			}
		}
	})
}

// BenchmarkSnapshotDiff measures an episode's two snapshots and their diff
// against its reset, on the stand-in's phone over Debian's adb server (the
// path of a device: each snapshot is six shell commands, the reset
// stops and clears the suite's apps and goes home), and reports the
// medians. On a device each command also pays for the device's own work.
func BenchmarkSnapshotDiff(b *testing.B) {
	addr := adbtest.UseServer(b)
	ph := phonetest.New(b, 1080, 2340)
	phonetest.InstallProBench(ph)
	ph.SetFile("/sdcard/Documents/plan.txt", "plan")
	dev := adbtest.Start(b, adbtest.Options{Shell: ph.Handle, FS: ph})
	c := &adb.Client{Addr: addr}
	ctx := context.Background()
	if err := c.Connect(ctx, dev.Addr()); err != nil {
		b.Fatal(err)
	}
	if err := c.Device(dev.Addr()).WaitFor(ctx, "device"); err != nil {
		b.Fatal(err)
	}
	e := android.New(android.Over(c, dev.Addr()), dev.Addr())
	setup := env.Setup{Type: android.Kind, Steps: []task.Step{{Launch: &task.Launch{App: phonetest.NotesApp}}}}
	opts := snapshot.Options{Watch: []string{"content://sms"}}
	var resets, snaps []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := e.Reset(ctx, setup); err != nil {
			b.Fatal(err)
		}
		resets = append(resets, time.Since(t0))
		t0 = time.Now()
		before, err := snapshot.Take(ctx, e, opts)
		if err != nil {
			b.Fatal(err)
		}
		after, err := snapshot.Take(ctx, e, opts)
		if err != nil {
			b.Fatal(err)
		}
		statediff.Compare(before, after, nil, statediff.Allowed{}, statediff.Limits{})
		snaps = append(snaps, time.Since(t0))
	}
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
