package vnc

import (
	"context"
	"fmt"

	"github.com/proctor-eval/proctor/internal/rfb"
)

// Dial connects to the VNC server at cfg.Addr (shared, so that a person
// may watch) and attaches the guest, if any. The connection and handshake
// are bounded by cfg.Timeout; a wrong password is an error that says so.
// The environment owns cfg.Guest from this call on: Dial closes it when it
// fails.
func Dial(ctx context.Context, cfg Config) (e *Env, err error) {
	defer func() {
		if err != nil && cfg.Guest != nil {
			cfg.Guest.Close()
		}
	}()
	addr, err := ParseAddr(cfg.Addr)
	if err != nil {
		return nil, err
	}
	cfg.Addr = addr
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c, err := rfb.Dial(ctx, addr, rfb.Config{Password: cfg.Password, Timeout: timeout, Shared: true})
	if err != nil {
		return nil, fmt.Errorf("vnc://%s: %w", addr, err)
	}
	e, err = newEnv(ctx, c, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	return e, nil
}
