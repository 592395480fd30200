package main

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		w, h int
		err  string
	}{
		{"1080x2400", 1080, 2400, ""},
		{"720x1600", 720, 1600, ""},
		{"1440x3120", 1440, 3120, ""},
		{"1080", 0, 0, "give WIDTHxHEIGHT"},
		{"1080X2400", 0, 0, "give WIDTHxHEIGHT"},
		{"x2400", 0, 0, "give WIDTHxHEIGHT"},
		{"480x800", 0, 0, "at least 720x1600"},
		{"1080x-2400", 0, 0, "at least 720x1600"},
		{"1080x9000", 0, 0, "at most 4096"},
	}
	for _, tc := range tests {
		w, h, err := parseSize(tc.in)
		switch {
		case tc.err == "" && (err != nil || w != tc.w || h != tc.h):
			t.Errorf("parseSize(%q) = %d, %d, %v; want %d, %d", tc.in, w, h, err, tc.w, tc.h)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseSize(%q): error %v, want one saying %q", tc.in, err, tc.err)
		}
	}
}

// The stand-in connects Debian's adb server to itself, which lists it
// ready with the size asked; when it is stopped it disconnects, and the
// server lists it no more.
func TestStandIn(t *testing.T) {
	addr := adbtest.UseServer(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out, w := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--size", "1080x2340"}, w, &stderr)
		w.Close()
	}()
	r := bufio.NewReader(out)
	serial, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no serial: %v; %s", err, <-done)
	}
	serial = strings.TrimSpace(serial)
	go io.Copy(io.Discard, r)

	c := &adb.Client{Addr: addr}
	ds, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ds, func(d adb.DeviceInfo) bool {
		return d.Serial == serial && d.State == "device" && d.Model == "Proctor_Standin"
	}) {
		t.Fatalf("adb devices: %+v, want %s ready", ds, serial)
	}
	res, err := c.Device(serial).Shell(ctx, "wm size")
	if err != nil || string(res.Stdout) != "Physical size: 1080x2340\n" {
		t.Errorf("wm size: %+v, %v", res, err)
	}

	stop()
	if err := <-done; err != nil {
		t.Fatalf("stopped: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not a device") || !strings.Contains(stderr.String(), serial+" disconnected") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	ds, err = c.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(ds, func(d adb.DeviceInfo) bool { return d.Serial == serial }) {
		t.Errorf("after the stand-in stopped, adb devices: %+v", ds)
	}
}
