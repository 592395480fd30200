package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/guest"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

type guestOptions struct {
	local        bool
	listen       string
	token        string
	tokenFile    string
	size         string
	homeTemplate string
	verbose      bool
}

func newGuestCommand() *cobra.Command {
	var o guestOptions
	c := &cobra.Command{
		Use:   "guest --local",
		Short: "Serve a desktop over HTTP for the runner (the guest daemon)",
		Long: `Guest serves one desktop over an HTTP API (JSON and images): screenshots,
the accessibility tree, set-of-mark images, unified actions with a record of
the element under each click, commands, files, windows, the clipboard, and
reset with setup steps. The runner drives every desktop through this API,
so a local desktop, a container, a VM or a pod differ only in where the
daemon runs.

With --local it starts its own desktop: Xvfb, the openbox window manager, a
D-Bus session bus and the AT-SPI registry, with a fresh home folder at each
reset. Everything it starts ends when it stops (Ctrl-C or SIGTERM), or when
it dies.

Every request needs the bearer token (Authorization: Bearer TOKEN), since
the API runs commands. Give it in a file only you can read (--token-file)
or in PROCTOR_TOKEN; --token works too but shows the token to every user
of the machine in ps. Without any of them a token is made and printed
once.

The daemon listens on 127.0.0.1 unless --listen says otherwise, and warns
when it listens on any other address: the API is plain HTTP, so anyone on
the network path can read the token. It closes connections that stay
silent or idle, and serves a bounded number at once. Files are served
only from the desktop's home and temporary folders.`,
		Example: `  proctor guest --local
  (umask 077; head -c 24 /dev/urandom | base64 > ~/.proctor-token)
  proctor guest --local --listen 127.0.0.1:7400 --size 1280x800 --token-file ~/.proctor-token
  curl -H "Authorization: Bearer $(cat ~/.proctor-token)" http://127.0.0.1:7400/v1/screenshot > shot.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGuest(cmd, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.local, "local", false, "start a local desktop (Xvfb, window manager, D-Bus, AT-SPI)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:7400", "address to listen on")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the bearer token (default: $PROCTOR_TOKEN, else a new one, printed)")
	f.StringVar(&o.token, "token", "", "bearer token, visible in ps: prefer --token-file or $PROCTOR_TOKEN")
	f.StringVar(&o.size, "size", "1920x1080", "screen size of the local desktop, WIDTHxHEIGHT")
	f.StringVar(&o.homeTemplate, "home-template", "", "folder copied into the home folder at every reset")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every request and the desktop's programs' output")
	return c
}

func runGuest(cmd *cobra.Command, o guestOptions) error {
	if !o.local {
		return errors.New("say --local to start a desktop to serve (serving an existing display is not supported yet)")
	}
	size, err := task.Environment{Resolution: o.size}.Size()
	if err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	w, h := size.W, size.H
	stderr := cmd.ErrOrStderr()
	token, err := guestToken(o, os.Getenv("PROCTOR_TOKEN"), stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	if msg := exposure(ln.Addr()); msg != "" {
		fmt.Fprintf(stderr, "warning: %s\n", msg)
	}
	cfg := xdesktop.Config{Width: w, Height: h, HomeTemplate: o.homeTemplate}
	if o.verbose {
		cfg.Log = os.Stderr
	}
	ctx := cmd.Context()
	start := time.Now()
	d, err := xdesktop.Start(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer d.Close()
	fmt.Fprintf(stderr, "desktop %s (%dx%d) ready in %s; serving on http://%s\n", d.Display(), w, h,
		time.Since(start).Round(time.Millisecond), ln.Addr())
	srv := &guest.Server{Env: d, Token: token}
	if o.verbose {
		srv.Log = log.New(stderr, "guest: ", log.LstdFlags|log.Lmicroseconds)
	}
	stop := context.AfterFunc(ctx, func() { fmt.Fprintln(stderr, "stopping") })
	defer stop()
	return srv.Serve(ctx, ln)
}

// guestToken returns the bearer token from --token-file, --token or
// PROCTOR_TOKEN (env), or a new one, printed since nobody knows it yet.
// The token is never printed otherwise.
func guestToken(o guestOptions, env string, stderr io.Writer) (string, error) {
	switch {
	case o.tokenFile != "" && o.token != "":
		return "", errors.New("--token and --token-file: give one")
	case o.tokenFile != "":
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		token := strings.TrimSpace(string(b))
		if token == "" {
			return "", fmt.Errorf("--token-file: %s is empty", o.tokenFile)
		}
		// Only a warning: mounted secrets (Kubernetes, Docker) are often
		// readable by all, inside a container nobody else uses.
		if fi, err := os.Stat(o.tokenFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(stderr, "warning: --token-file %s is readable by other users (mode %v); chmod 600 it\n", o.tokenFile, fi.Mode().Perm())
		}
		return token, nil
	case o.token != "":
		fmt.Fprintln(stderr, "warning: --token is visible to every user in ps; prefer --token-file or PROCTOR_TOKEN")
		return o.token, nil
	case env != "":
		return env, nil
	}
	token := guest.NewToken()
	fmt.Fprintf(stderr, "token: %s\n", token)
	return token, nil
}

// exposure says what is wrong with serving the API, plain HTTP, on addr:
// nothing for a loopback address.
func exposure(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	switch {
	case !ok:
		return ""
	case ta.IP.IsLoopback():
		return ""
	case ta.IP == nil || ta.IP.IsUnspecified():
		return fmt.Sprintf("listening on every network interface (%s): the API is plain HTTP, so the token and everything else can be read on the network; listen on 127.0.0.1 and reach it through an SSH tunnel, or keep the network private", addr)
	}
	return fmt.Sprintf("listening on %s, not a loopback address: the API is plain HTTP, so the token and everything else can be read on the network; listen on 127.0.0.1 and reach it through an SSH tunnel, or keep the network private", addr)
}
