package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
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
the API runs commands. Without --token (or PROCTOR_TOKEN) a token is made
and printed once. The daemon listens on 127.0.0.1 unless --listen says
otherwise; files are served only from the desktop's home and temporary
folders.`,
		Example: `  proctor guest --local
  proctor guest --local --listen 127.0.0.1:7400 --size 1280x800 --token "$PROCTOR_TOKEN"
  curl -H "Authorization: Bearer $PROCTOR_TOKEN" http://127.0.0.1:7400/v1/screenshot > shot.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGuest(cmd, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.local, "local", false, "start a local desktop (Xvfb, window manager, D-Bus, AT-SPI)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:7400", "address to listen on")
	f.StringVar(&o.token, "token", "", "bearer token (default: $PROCTOR_TOKEN, else a new one, printed)")
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
	token := o.token
	if token == "" {
		token = os.Getenv("PROCTOR_TOKEN")
	}
	stderr := cmd.ErrOrStderr()
	if token == "" {
		token = guest.NewToken()
		fmt.Fprintf(stderr, "token: %s\n", token)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
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
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "stopping")
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}
