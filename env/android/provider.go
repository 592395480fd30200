package android

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/internal/adb"
)

// Provider returns the provider of Android devices over ADB: --env
// android[=SERIAL].
func Provider() provider.Provider { return androidProvider{} }

type androidProvider struct{}

func (androidProvider) Name() string  { return "android" }
func (androidProvider) Usage() string { return "android[=SERIAL]" }
func (androidProvider) Help() string {
	return "Android devices over ADB: every ready device \"adb devices\" lists, or the one named (its serial, or HOST:PORT of a device " +
		"over TCP, which is connected first); the adb server is $ADB_SERVER_SOCKET (tcp:HOST:PORT), else 127.0.0.1:$ANDROID_ADB_SERVER_PORT (5037)"
}

// Sources makes a place of every ready device, or of the one named, and
// reads each one's screen now.
func (androidProvider) Sources(ctx context.Context, arg string, _ provider.Options) ([]env.Source, error) {
	addr, err := ServerAddr(os.Getenv)
	if err != nil {
		return nil, err
	}
	c := &adb.Client{Addr: addr}
	dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
	defer cancel()
	serials := []string{arg}
	if arg == "" {
		if serials, err = Serials(dctx, c); err != nil {
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
		info, err := New(Over(c, serial), serial).Info(dctx)
		if err != nil {
			return nil, err
		}
		out = append(out, env.Source{Name: "android " + serial, Type: Kind, Size: info.Screen,
			// A device cannot reach this machine's loopback.
			Remote: true,
			Start: func(context.Context, action.Size) (env.Env, error) {
				return New(Over(c, serial), serial), nil
			}})
	}
	return out, nil
}
