package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/browser"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/env/vnc"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/internal/adb"
)

// dialTimeout bounds reaching a guest daemon while the pool is made.
const dialTimeout = 30 * time.Second

// builtin is the one table of providers. A new kind of environment adds
// its entry here.
var builtin = []Provider{
	{
		Name:  "local",
		Usage: "local",
		Help:  "--parallel local X11 desktops, each started at the size its task asks for (the default); they run browser tasks in Chromium, seen as pixels",
		Sources: func(_ context.Context, arg string, o Options) ([]env.Source, error) {
			n := max(o.Parallel, 1)
			if arg != "" {
				v, err := strconv.Atoi(arg)
				if err != nil || v < 1 || v > 64 {
					return nil, fmt.Errorf("local=%s: give the number of desktops, 1 to 64", arg)
				}
				n = v
			}
			out := make([]env.Source, n)
			for i := range out {
				out[i] = env.Source{Name: fmt.Sprintf("local %d", i+1), Type: "x11",
					// A browser task runs in Chromium on the desktop, seen as pixels.
					Also: []string{"browser"},
					Start: func(ctx context.Context, size action.Size) (env.Env, error) {
						return xdesktop.Start(ctx, xdesktop.Config{Width: size.W, Height: size.H, HomeTemplate: o.HomeTemplate, Log: o.Log})
					}}
			}
			return out, nil
		},
	},
	{
		Name:  "guest",
		Usage: "guest=https://HOST:PORT#sha256=FINGERPRINT",
		Help:  "a desktop served by \"proctor guest\" on another machine (token from --token-file or $PROCTOR_TOKEN)",
		Sources: func(ctx context.Context, arg string, o Options) ([]env.Source, error) {
			if arg == "" {
				return nil, errors.New("say where the daemon is: guest=https://HOST:PORT#sha256=FINGERPRINT")
			}
			if o.Token == "" {
				return nil, errors.New("no token for the guest daemon: give --token-file FILE or set $PROCTOR_TOKEN")
			}
			target, err := remote.ParseTarget(arg)
			if err != nil {
				return nil, err
			}
			// A daemon that takes the connection and never answers must
			// not hold the run before it starts.
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			c, err := remote.Dial(dctx, arg, o.Token)
			if err != nil {
				return nil, err
			}
			info, err := c.Info(dctx)
			if err != nil {
				c.Close()
				return nil, fmt.Errorf("guest %s: %w", target.Base(), err)
			}
			kind := info.Kind
			if kind == "" {
				kind = "x11"
			}
			first := c
			host, _, _ := net.SplitHostPort(target.Host)
			return []env.Source{{Name: "guest " + target.Base(), Type: kind, Size: info.Screen,
				Remote: !env.Loopback(host),
				Start: func(ctx context.Context, _ action.Size) (env.Env, error) {
					if first != nil { // the client made while parsing, once
						c := first
						first = nil
						return c, nil
					}
					return remote.Dial(ctx, arg, o.Token)
				}}}, nil
		},
	},
	{
		Name:  "browser",
		Usage: "browser[=N]",
		Help:  "--parallel (or N) headless Chromium browsers over the DevTools protocol, a fresh browser context per episode, for tasks of environment.type: browser",
		Sources: func(_ context.Context, arg string, o Options) ([]env.Source, error) {
			n := max(o.Parallel, 1)
			if arg != "" {
				v, err := strconv.Atoi(arg)
				if err != nil || v < 1 || v > 64 {
					return nil, fmt.Errorf("browser=%s: give the number of browsers, 1 to 64", arg)
				}
				n = v
			}
			if _, err := browser.ExecPath(); err != nil {
				return nil, err
			}
			out := make([]env.Source, n)
			for i := range out {
				out[i] = env.Source{Name: fmt.Sprintf("browser %d", i+1), Type: "browser",
					Start: func(ctx context.Context, size action.Size) (env.Env, error) {
						return browser.Start(ctx, browser.Config{Width: size.W, Height: size.H, Log: o.Log})
					}}
			}
			return out, nil
		},
	},
	{
		Name:  "vnc",
		Usage: "vnc://HOST:PORT",
		Help:  "a desktop Proctor did not start, over VNC (see --vnc-password-file, --vnc-guest, --reset-command)",
		Sources: func(ctx context.Context, arg string, o Options) ([]env.Source, error) {
			addr, err := vnc.ParseAddr(arg)
			if err != nil {
				return nil, err
			}
			if o.VNCGuest != "" {
				if o.Token == "" {
					return nil, errors.New("no token for the guest daemon of --vnc-guest: give --token-file FILE or set $PROCTOR_TOKEN")
				}
				if _, err := remote.ParseTarget(o.VNCGuest); err != nil {
					return nil, fmt.Errorf("--vnc-guest: %w", err)
				}
			}
			dial := func(ctx context.Context) (*vnc.Env, error) {
				cfg := vnc.Config{Addr: addr, Password: o.VNCPassword, ResetCommand: o.ResetCommand, Log: o.Log}
				if o.VNCGuest != "" {
					g, err := remote.Dial(ctx, o.VNCGuest, o.Token)
					if err != nil {
						return nil, fmt.Errorf("--vnc-guest: %w", err)
					}
					cfg.Guest = g
				}
				return vnc.Dial(ctx, cfg)
			}
			// The server is reached now, so that a wrong address or
			// password is refused before any task is scored.
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			first, err := dial(dctx)
			if err != nil {
				return nil, err
			}
			info, err := first.Info(dctx)
			if err != nil {
				first.Close()
				return nil, err
			}
			// With a guest, the desktop is also the guest's kind: a VNC
			// server beside "proctor guest" runs x11 tasks.
			var also []string
			if k := first.GuestKind(); k != "" && k != "vnc" {
				also = []string{k}
			}
			host, _, _ := net.SplitHostPort(addr)
			return []env.Source{{Name: first.Name(), Type: "vnc", Also: also, Size: info.Screen,
				Remote: !env.Loopback(host),
				Start: func(ctx context.Context, _ action.Size) (env.Env, error) {
					if first != nil { // the connection made while parsing, once
						e := first
						first = nil
						return e, nil
					}
					return dial(ctx)
				}}}, nil
		},
	},
	{
		Name:  "android",
		Usage: "android[=SERIAL]",
		Help: "Android devices over ADB: every ready device \"adb devices\" lists, or the one named (its serial, or HOST:PORT of a device " +
			"over TCP, which is connected first); the adb server is $ADB_SERVER_SOCKET (tcp:HOST:PORT), else 127.0.0.1:$ANDROID_ADB_SERVER_PORT (5037)",
		Sources: func(ctx context.Context, arg string, o Options) ([]env.Source, error) {
			addr, err := android.ServerAddr(os.Getenv)
			if err != nil {
				return nil, err
			}
			c := &adb.Client{Addr: addr}
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			serials := []string{arg}
			if arg == "" {
				if serials, err = android.Serials(dctx, c); err != nil {
					return nil, err
				}
			} else if strings.Contains(arg, ":") {
				if err := c.Connect(dctx, arg); err != nil {
					return nil, fmt.Errorf("android=%s: %w", arg, err)
				}
			}
			var out []env.Source
			for _, serial := range serials {
				dev := c.Device(serial)
				if err := dev.WaitFor(dctx, "device"); err != nil {
					return nil, fmt.Errorf("android %s: %w", serial, err)
				}
				info, err := android.New(android.Over(c, serial), serial).Info(dctx)
				if err != nil {
					return nil, err
				}
				out = append(out, env.Source{Name: "android " + serial, Type: android.Kind, Size: info.Screen,
					// A device cannot reach this machine's loopback.
					Remote: true,
					Start: func(context.Context, action.Size) (env.Env, error) {
						return android.New(android.Over(c, serial), serial), nil
					}})
			}
			return out, nil
		},
	},
}
