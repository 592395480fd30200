package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/internal/adb"
	"github.com/proctor-eval/proctor/observe"
)

// Over is the Device of a device the adb server serves. A device reached
// over TCP (a serial HOST:PORT) that the server holds offline after its
// connection dropped is connected again once before a command fails:
// Debian's adb 29 does not do it by itself.
func Over(c *adb.Client, serial string) Device {
	return &adbDevice{c: c, d: c.Device(serial), serial: serial}
}

type adbDevice struct {
	c      *adb.Client
	d      *adb.Device
	serial string
}

// retry runs f, and again after reconnecting a TCP device the server
// holds offline.
func (a *adbDevice) retry(ctx context.Context, f func() error) error {
	err := f()
	if err == nil || !errors.Is(err, adb.ErrOffline) || !strings.Contains(a.serial, ":") || ctx.Err() != nil {
		return err
	}
	if rerr := a.c.Reconnect(ctx, a.serial); rerr != nil {
		return fmt.Errorf("%w (connecting again: %v)", err, rerr)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if werr := a.d.WaitFor(wctx, "device"); werr != nil {
		return fmt.Errorf("%w (connecting again: %v)", err, werr)
	}
	return f()
}

func (a *adbDevice) Shell(ctx context.Context, cmd string) (observe.CommandResult, error) {
	var out observe.CommandResult
	err := a.retry(ctx, func() error {
		res, err := a.d.Shell(ctx, cmd)
		out = observe.CommandResult{Stdout: string(res.Stdout), Stderr: string(res.Stderr), ExitCode: res.ExitCode}
		return err
	})
	return out, err
}

func (a *adbDevice) ExecOut(ctx context.Context, cmd string) ([]byte, error) {
	var out []byte
	err := a.retry(ctx, func() error {
		var err error
		out, err = a.d.ExecOut(ctx, cmd)
		return err
	})
	return out, err
}

func (a *adbDevice) Push(ctx context.Context, data []byte, remote string) error {
	return a.retry(ctx, func() error { return a.d.Push(ctx, bytes.NewReader(data), remote, 0o644, time.Now()) })
}

func (a *adbDevice) Pull(ctx context.Context, remote string) ([]byte, error) {
	var out []byte
	err := a.retry(ctx, func() error {
		var err error
		out, err = a.d.Pull(ctx, remote)
		return err
	})
	if errors.Is(err, adb.ErrFileNotFound) {
		return nil, fmt.Errorf("%s: %w", remote, observe.ErrNotFound)
	}
	return out, err
}

// Serials lists the devices the adb server serves that are ready ("device"
// state); unready ones are an error naming each and what to do.
func Serials(ctx context.Context, c *adb.Client) ([]string, error) {
	list, err := c.Devices(ctx)
	if err != nil {
		return nil, err
	}
	var ready, problems []string
	for _, d := range list {
		switch d.State {
		case "device":
			ready = append(ready, d.Serial)
		case "unauthorized":
			problems = append(problems, d.Serial+" is unauthorized: accept the computer's key on the device (USB debugging prompt)")
		case "offline":
			problems = append(problems, d.Serial+" is offline: reconnect it, or restart adb (adb kill-server)")
		default:
			problems = append(problems, d.Serial+" is "+d.State)
		}
	}
	if len(ready) == 0 {
		if len(problems) > 0 {
			return nil, fmt.Errorf("no Android device is ready: %s", strings.Join(problems, "; "))
		}
		return nil, errors.New("no Android device is attached: start an emulator, plug in a phone with USB debugging on, or give android=HOST:PORT of one over TCP")
	}
	return ready, nil
}

// ServerAddr is where the adb server listens, as adb itself reads it:
// $ADB_SERVER_SOCKET (tcp:HOST:PORT), else 127.0.0.1 and
// $ANDROID_ADB_SERVER_PORT (default 5037).
func ServerAddr(getenv func(string) string) (string, error) {
	if s := getenv("ADB_SERVER_SOCKET"); s != "" {
		hp, ok := strings.CutPrefix(s, "tcp:")
		if !ok || !strings.Contains(hp, ":") {
			return "", fmt.Errorf("$ADB_SERVER_SOCKET %q: give tcp:HOST:PORT", s)
		}
		return hp, nil
	}
	port := getenv("ANDROID_ADB_SERVER_PORT")
	if port == "" {
		return adb.DefaultAddr, nil
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("$ANDROID_ADB_SERVER_PORT %q is not a port", port)
	}
	return "127.0.0.1:" + port, nil
}
