package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/env/remote"
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
	tlsCert      string
	tlsKey       string
	insecure     bool
	size         string
	homeTemplate string
	verbose      bool
	vnc          string
	vncPassFile  string
}

func newGuestCommand() *cobra.Command {
	var o guestOptions
	c := &cobra.Command{
		Use:   "guest --local",
		Short: "Serve a desktop over HTTPS for the runner (the guest daemon)",
		Long: `Guest serves one desktop over an HTTPS API (JSON and images): screenshots,
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

The API is served over TLS. Without --tls-cert and --tls-key the daemon
makes a self-signed certificate at each start, kept in memory only, and
prints its SHA-256 fingerprint and the address to give the runner,
https://HOST:PORT#sha256=FINGERPRINT: the runner accepts exactly that
certificate, so nobody on the network path can read the token or stand
in for the daemon. A restarted daemon has a new fingerprint. With a
certificate of your own, signed by an authority the runner's machine
trusts, https://HOST:PORT without the fingerprint works too.

--insecure serves plain HTTP instead, for loopback (behind an SSH tunnel,
say) or a private network: on any other address the daemon warns that
the token can be read on the network. The runner and the daemon check
that they speak the same API version.

With --vnc HOST:PORT the desktop also serves its screen over VNC (x11vnc,
started with the desktop and kept across resets; --vnc-password-file
holds its password on the first line, else it has none). A runner then
drives the desktop as any VNC desktop, with this daemon beside it for the
setup, the tree and the checks: proctor run --env vnc://HOST:PORT
--vnc-guest https://HOST:PORT#sha256=FINGERPRINT.

The daemon listens on 127.0.0.1 unless --listen says otherwise. It closes
connections that stay silent or idle, and serves a bounded number at
once. Files are served only from the desktop's home and temporary
folders.`,
		Example: `  (umask 077; head -c 24 /dev/urandom | base64 > ~/.proctor-token)
  proctor guest --local --token-file ~/.proctor-token
  # prints: fingerprint sha256=3f1c…
  #         desktop :99 (1920x1080) ready in 1.2s; serving on https://127.0.0.1:7400#sha256=3f1c…
  # and the runner dials https://127.0.0.1:7400#sha256=3f1c… with the token
  proctor guest --local --listen 0.0.0.0:7400 --size 1280x800 --token-file ~/.proctor-token
  proctor guest --local --listen 0.0.0.0:7400 --tls-cert guest.crt --tls-key guest.key --token-file ~/.proctor-token
  curl -k -H "Authorization: Bearer $(cat ~/.proctor-token)" https://127.0.0.1:7400/v1/screenshot > shot.png
  proctor guest --local --vnc 127.0.0.1:5901 --token-file ~/.proctor-token`,
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
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve, with --tls-key (default: a self-signed one, made at start)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.BoolVar(&o.insecure, "insecure", false, "serve plain HTTP, not TLS: for loopback or a private network")
	f.StringVar(&o.size, "size", "1920x1080", "screen size of the local desktop, WIDTHxHEIGHT")
	f.StringVar(&o.homeTemplate, "home-template", "", "folder copied into the home folder at every reset")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every request and the desktop's programs' output")
	f.StringVar(&o.vnc, "vnc", "", "also serve the desktop over VNC (x11vnc) on HOST:PORT; a loopback HOST listens on loopback only")
	f.StringVar(&o.vncPassFile, "vnc-password-file", "", "with --vnc: file whose first line is the VNC password (default: none)")
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
	if err := guestVNCOptions(o, stderr); err != nil {
		return err
	}
	// Everything that can refuse the options does so before the desktop
	// starts, which takes seconds; the listener first, so that a new
	// token is not printed for a daemon that then refuses to start.
	ln, tlsConfig, target, err := guestListen(o, stderr)
	if err != nil {
		return err
	}
	token, err := guestToken(o, os.Getenv("PROCTOR_TOKEN"), stderr)
	if err != nil {
		ln.Close()
		return err
	}
	cfg := xdesktop.Config{Width: w, Height: h, HomeTemplate: o.homeTemplate}
	if o.verbose {
		cfg.Log = os.Stderr
	}
	if o.vnc != "" {
		cfg.VNC = &xdesktop.VNC{Listen: o.vnc, PasswordFile: o.vncPassFile}
	}
	ctx := cmd.Context()
	start := time.Now()
	d, err := xdesktop.Start(ctx, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer d.Close()
	fmt.Fprintf(stderr, "desktop %s (%dx%d) ready in %s; serving on %s\n", d.Display(), w, h,
		time.Since(start).Round(time.Millisecond), target)
	if a := d.VNCAddr(); a != "" {
		pw := "no password"
		if o.vncPassFile != "" {
			pw = "password from " + o.vncPassFile
		}
		fmt.Fprintf(stderr, "VNC on vnc://%s (%s)\n", a, pw)
	}
	srv := &guest.Server{Env: d, Token: token, TLS: tlsConfig, Build: version}
	if o.verbose {
		srv.Log = log.New(stderr, "guest: ", log.LstdFlags|log.Lmicroseconds)
	}
	stop := context.AfterFunc(ctx, func() { fmt.Fprintln(stderr, "stopping") })
	defer stop()
	return srv.Serve(ctx, ln)
}

// guestListen listens on --listen and returns the TLS configuration to
// serve (nil with --insecure) and the target a runner dials, with the
// certificate's fingerprint, which it prints. The daemon serves plain
// HTTP only when --insecure says so, never for want of a certificate.
func guestListen(o guestOptions, stderr io.Writer) (ln net.Listener, config *tls.Config, target remote.Target, err error) {
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return nil, nil, target, errors.New("--tls-cert and --tls-key go together: give both, or neither for a self-signed certificate")
	case o.insecure && o.tlsCert != "":
		return nil, nil, target, errors.New("--insecure serves plain HTTP, --tls-cert TLS: give one")
	}
	var cert tls.Certificate
	if o.tlsCert != "" {
		// Loaded before listening, so that a bad file fails at once.
		if cert, err = tls.LoadX509KeyPair(o.tlsCert, o.tlsKey); err != nil {
			return nil, nil, target, fmt.Errorf("--tls-cert, --tls-key: %w", err)
		}
	}
	if ln, err = net.Listen("tcp", o.listen); err != nil {
		return nil, nil, target, err
	}
	target = remote.Target{Scheme: "https", Host: ln.Addr().String()}
	if o.insecure {
		target.Scheme = "http"
		if msg := exposure(ln.Addr()); msg != "" {
			fmt.Fprintf(stderr, "warning: %s\n", msg)
		}
		return ln, nil, target, nil
	}
	if o.tlsCert == "" {
		if cert, _, err = guest.SelfSigned(certHosts(o.listen, ln.Addr())...); err != nil {
			ln.Close()
			return nil, nil, target, err
		}
	}
	target.Fingerprint = remote.Fingerprint(cert.Certificate[0])
	fmt.Fprintf(stderr, "fingerprint sha256=%s\n", target.Fingerprint)
	return ln, &tls.Config{Certificates: []tls.Certificate{cert}}, target, nil
}

// certHosts returns the names and addresses a self-signed certificate is
// made for: the host of --listen as given and the address listened on,
// or, on every interface, this machine's name and addresses. A pinning
// client looks at none of them; other clients (curl --cacert) do.
func certHosts(listen string, addr net.Addr) []string {
	host, _, _ := net.SplitHostPort(listen)
	hosts := []string{host}
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return hosts
	}
	if !ta.IP.IsUnspecified() {
		return append(hosts, ta.IP.String())
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			hosts = append(hosts, ipn.IP.String())
		}
	}
	return hosts
}

// guestToken returns the bearer token from --token-file, --token or
// PROCTOR_TOKEN (env), or a new one, printed since nobody knows it yet.
// The token is never printed otherwise.
func guestToken(o guestOptions, env string, stderr io.Writer) (string, error) {
	switch {
	case o.tokenFile != "" && o.token != "":
		return "", errors.New("--token and --token-file: give one")
	case o.tokenFile != "":
		return readTokenFile(o.tokenFile, stderr)
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

// readTokenFile reads a bearer token from --token-file, trimmed; the
// daemon and the runner read it the same way.
func readTokenFile(path string, stderr io.Writer) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file: %s is empty", path)
	}
	// Only a warning: mounted secrets (Kubernetes, Docker) are often
	// readable by all, inside a container nobody else uses.
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(stderr, "warning: --token-file %s is readable by other users (mode %v); chmod 600 it\n", path, fi.Mode().Perm())
	}
	return token, nil
}

// exposure says what is wrong with serving the API in plain HTTP
// (--insecure) on addr: nothing for a loopback address.
func exposure(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	const why = "with --insecure the API is plain HTTP, so the token and everything else can be read on the network; drop --insecure to serve TLS, or listen on 127.0.0.1 and reach it through an SSH tunnel"
	switch {
	case !ok:
		return ""
	case ta.IP.IsLoopback():
		return ""
	case ta.IP == nil || ta.IP.IsUnspecified():
		return fmt.Sprintf("listening on every network interface (%s): %s", addr, why)
	}
	return fmt.Sprintf("listening on %s, not a loopback address: %s", addr, why)
}

// guestVNCOptions refuses --vnc options that cannot work before the
// desktop starts, and warns of a VNC server anyone on the network may
// drive.
func guestVNCOptions(o guestOptions, stderr io.Writer) error {
	if o.vnc == "" {
		if o.vncPassFile != "" {
			return errors.New("--vnc-password-file is for --vnc: say where the VNC server listens")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(o.vnc)
	if err != nil {
		return fmt.Errorf("--vnc %q: give HOST:PORT (127.0.0.1:5901): %v", o.vnc, err)
	}
	if _, err := exec.LookPath("x11vnc"); err != nil {
		return errors.New("--vnc needs x11vnc (apt-get install x11vnc)")
	}
	if o.vncPassFile != "" {
		if _, err := os.Stat(o.vncPassFile); err != nil {
			return fmt.Errorf("--vnc-password-file: %w", err)
		}
		return nil
	}
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		fmt.Fprintf(stderr, "warning: the VNC server on %s has no password: anyone who reaches it drives the desktop (give --vnc-password-file)\n", o.vnc)
	}
	return nil
}
