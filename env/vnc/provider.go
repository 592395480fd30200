package vnc

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/env/remote"
)

// Provider returns the provider of desktops over VNC: --env
// vnc://HOST:PORT. It reads these provider.Options.Settings:
//
//	vnc.password       the VNC server's password; empty: none
//	vnc.password-file  a file whose first line is the password, read in its stead (--vnc-password-file)
//	vnc.guest          a guest daemon beside the server, https://HOST:PORT#sha256=FINGERPRINT (--vnc-guest), with o.Token
//	vnc.reset-command  without a guest: a shell command, run here, that resets the desktop (--reset-command)
func Provider() provider.Provider { return vncProvider{} }

type vncProvider struct{}

func (vncProvider) Name() string  { return "vnc" }
func (vncProvider) Usage() string { return "vnc://HOST:PORT" }
func (vncProvider) Help() string {
	return "a desktop Proctor did not start, over VNC (see --vnc-password-file, --vnc-guest, --reset-command)"
}

// Sources reaches the server now, so that a wrong address or password is
// refused before any task is scored, and makes its one place.
func (vncProvider) Sources(ctx context.Context, arg string, o provider.Options) ([]env.Source, error) {
	addr, err := ParseAddr(arg)
	if err != nil {
		return nil, err
	}
	password := o.Settings["vnc.password"]
	if file := o.Settings["vnc.password-file"]; file != "" {
		if password, err = ReadPasswordFile(file, o.Warn); err != nil {
			return nil, fmt.Errorf("--vnc-password-file: %w", err)
		}
	}
	guest := o.Settings["vnc.guest"]
	if guest != "" {
		if o.Token == "" {
			return nil, errors.New("no token for the guest daemon of --vnc-guest: give --token-file FILE or set $PROCTOR_TOKEN")
		}
		if _, err := remote.ParseTarget(guest); err != nil {
			return nil, fmt.Errorf("--vnc-guest: %w", err)
		}
	}
	dial := func(ctx context.Context) (*Env, error) {
		cfg := Config{Addr: addr, Password: password, ResetCommand: o.Settings["vnc.reset-command"]}
		if guest != "" {
			g, err := remote.Dial(ctx, guest, o.Token)
			if err != nil {
				return nil, fmt.Errorf("--vnc-guest: %w", err)
			}
			cfg.Guest = g
		}
		return Dial(ctx, cfg)
	}
	dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
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
	// With a guest, the desktop is also the guest's kind: a VNC server
	// beside "proctor guest" runs x11 tasks.
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
}
