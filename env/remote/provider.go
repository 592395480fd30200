package remote

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
)

// Provider returns the provider of desktops served by guest daemons:
// --env guest=https://HOST:PORT#sha256=FINGERPRINT, with o.Token.
func Provider() provider.Provider { return guestProvider{} }

type guestProvider struct{}

func (guestProvider) Name() string  { return "guest" }
func (guestProvider) Usage() string { return "guest=https://HOST:PORT#sha256=FINGERPRINT" }
func (guestProvider) Help() string {
	return "a desktop served by \"proctor guest\" on another machine (token from --token-file or $PROCTOR_TOKEN)"
}

// Sources dials the daemon now, so that a wrong address, token or version
// is refused before any task is scored, and makes its one place.
func (guestProvider) Sources(ctx context.Context, arg string, o provider.Options) ([]env.Source, error) {
	if arg == "" {
		return nil, errors.New("say where the daemon is: guest=https://HOST:PORT#sha256=FINGERPRINT")
	}
	if o.Token == "" {
		return nil, errors.New("no token for the guest daemon: give --token-file FILE or set $PROCTOR_TOKEN")
	}
	target, err := ParseTarget(arg)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
	defer cancel()
	c, err := Dial(dctx, arg, o.Token)
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
			return Dial(ctx, arg, o.Token)
		}}}, nil
}
