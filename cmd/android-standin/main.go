// Command android-standin serves a stand-in of an Android phone for
// trying Proctor's Android environment where no device or emulator is at
// hand. It is not a phone and runs no Android: it is the scripted phone of
// Proctor's tests (package env/android/phonetest: Settings, Notes and
// Sushi Finder, a few screens each, answering the shell commands the
// environment sends as Android 14 does), served over ADB's device
// protocol (package internal/adb/adbtest) on the loopback. It connects the
// adb server to it, as `adb connect` does, prints its serial, and serves
// until it is interrupted (SIGINT or SIGTERM), when it disconnects and
// exits.
//
// It is a program of its own, run from a checkout with
// `go run ./cmd/android-standin`, so that the proctor binary carries no
// stand-in of a device:
//
//	go run ./cmd/android-standin [--size WxH] [--port N]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/android/phonetest"
	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/internal/adb/adbtest"
)

// DefaultSize is the screen the stand-in has unless --size says
// otherwise: that of testdata/example's Android task.
const DefaultSize = "1080x2400"

// The scripted apps lay their screens out for at least this size.
const minW, minH, maxSide = 720, 1600, 4096

const usage = `usage: go run ./cmd/android-standin [--size WxH] [--port N]

A stand-in for trying Proctor's Android environment without a device: it
is NOT a phone and runs no Android. It serves the scripted phone of
Proctor's tests (Settings, Notes and Sushi Finder, a few screens each)
over ADB on 127.0.0.1:PORT, connects the adb server to it (adb connect;
the server is $ADB_SERVER_SOCKET, else 127.0.0.1:$ANDROID_ADB_SERVER_PORT,
5037, started when none answers), prints its serial, and serves until
interrupted (SIGINT or SIGTERM), when it disconnects and exits.
Its storage is a temporary folder, removed at exit.

`

// waitReady bounds connecting the server to the stand-in, and its
// disconnecting.
const waitReady = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "android-standin:", err)
		os.Exit(2)
	}
}

// run serves the stand-in until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("android-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.String("size", DefaultSize, "the screen, WIDTHxHEIGHT in pixels (at least 720x1600)")
	port := fs.Int("port", 0, "the loopback port to serve ADB on; 0: a free one")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("no arguments are taken, got %q", fs.Args())
	}
	w, h, err := parseSize(*size)
	if err != nil {
		return err
	}
	if *port < 0 || *port > 65535 {
		return fmt.Errorf("--port %d is not a port", *port)
	}
	addr, err := android.ServerAddr(os.Getenv)
	if err != nil {
		return err
	}

	root, err := os.MkdirTemp("", "android-standin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	ph, err := phonetest.NewIn(root, w, h)
	if err != nil {
		return err
	}
	phonetest.InstallProBench(ph)
	dev, err := adbtest.New(adbtest.Options{Shell: ph.Handle, FS: ph, Product: "proctor_standin", Model: "Proctor_Standin",
		Listen: "127.0.0.1:" + strconv.Itoa(*port)})
	if err != nil {
		return err
	}
	defer dev.Close()

	c := &adb.Client{Addr: addr}
	serial := dev.Addr()
	cctx, cancel := context.WithTimeout(ctx, waitReady)
	err = c.Connect(cctx, serial)
	if err == nil {
		err = c.Device(serial).WaitFor(cctx, "device")
	}
	cancel()
	if err != nil {
		disconnect(c, serial)
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("connect the adb server at %s to the stand-in: %w", addr, err)
	}
	fmt.Fprintln(stdout, serial)
	fmt.Fprintf(stderr, "android-standin: a stand-in of a %dx%d phone, not a device, is %s in adb devices (adb server %s); "+
		"SIGINT or SIGTERM disconnects it\n", w, h, serial, addr)

	<-ctx.Done()
	if err := disconnect(c, serial); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "android-standin: %s disconnected\n", serial)
	return nil
}

// disconnect drops the stand-in from the server and waits until the
// server no longer lists it.
func disconnect(c *adb.Client, serial string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitReady)
	defer cancel()
	if err := c.Disconnect(ctx, serial); err != nil && !errors.Is(err, adb.ErrNoDevice) {
		return fmt.Errorf("disconnect %s: %w", serial, err)
	}
	for {
		ds, err := c.Devices(ctx)
		if err != nil {
			return fmt.Errorf("disconnect %s: %w", serial, err)
		}
		if !slices.ContainsFunc(ds, func(d adb.DeviceInfo) bool { return d.Serial == serial }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("disconnect %s: the adb server still lists it", serial)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// parseSize reads WIDTHxHEIGHT within the sizes the scripted apps are
// laid out for.
func parseSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(s, "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil {
		return 0, 0, fmt.Errorf("--size %q: give WIDTHxHEIGHT in pixels, such as %s", s, DefaultSize)
	}
	if w < minW || h < minH || w > maxSide || h > maxSide {
		return 0, 0, fmt.Errorf("--size %s: the scripted apps need at least %dx%d, and at most %d a side", s, minW, minH, maxSide)
	}
	return w, h, nil
}
