package adb

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultAddr is the adb server's usual address.
const DefaultAddr = "127.0.0.1:5037"

// Client talks to one adb server. The zero value uses DefaultAddr and
// starts the server with the adb binary on PATH when none answers. A
// Client is safe for concurrent use; each call opens its own connection.
type Client struct {
	// Addr is the adb server's address; "" means DefaultAddr.
	Addr string
	// ADB is the adb binary used to start the server when none answers;
	// "" means "adb" looked up on PATH. The server is started with
	// `adb -P PORT start-server`, and only for a loopback Addr.
	ADB string
	// NoStart, when set, never starts a server.
	NoStart bool

	startMu sync.Mutex
}

// DeviceInfo is one line of `adb devices -l`.
type DeviceInfo struct {
	Serial      string
	State       string // "device", "offline", "unauthorized", "authorizing", "connecting", "recovery", ...
	USB         string // the usb: field, if any
	Product     string
	Model       string
	Device      string
	TransportID int64 // 0 when the server does not report it
}

func (c *Client) addr() string {
	if c.Addr == "" {
		return DefaultAddr
	}
	return c.Addr
}

// dial opens a connection to the server for op, starting the server if
// none answers and that is allowed.
func (c *Client) dial(ctx context.Context, op, serial string) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, &OpError{Op: op, Serial: serial, Kind: err}
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", c.addr())
	if err != nil && ctx.Err() == nil && errors.Is(err, syscall.ECONNREFUSED) && !c.NoStart {
		if serr := c.startServer(ctx); serr != nil {
			return nil, &OpError{Op: op, Serial: serial, Kind: ErrServerUnreachable, Msg: "could not start the adb server", Err: serr}
		}
		nc, err = d.DialContext(ctx, "tcp", c.addr())
	}
	if err != nil {
		kind := error(ErrServerUnreachable)
		if cerr := ctx.Err(); cerr != nil {
			kind = cerr
		}
		return nil, &OpError{Op: op, Serial: serial, Kind: kind, Msg: c.addr(), Err: err}
	}
	cn := &conn{ctx: ctx, nc: nc, r: bufio.NewReaderSize(nc, 64*1024), op: op, serial: serial}
	cn.stop = context.AfterFunc(ctx, func() { nc.Close() })
	return cn, nil
}

// startServer runs `adb -P PORT start-server` for a loopback Addr.
func (c *Client) startServer(ctx context.Context) error {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	// Another caller may have started it meanwhile.
	if nc, err := net.DialTimeout("tcp", c.addr(), time.Second); err == nil {
		nc.Close()
		return nil
	}
	host, port, err := net.SplitHostPort(c.addr())
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("server address %s is not on this machine", c.addr())
	}
	bin := c.ADB
	if bin == "" {
		if bin, err = exec.LookPath("adb"); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, bin, "-P", port, "start-server")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The server daemonises; should it keep our pipes open, don't wait on it.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fmt.Errorf("%s -P %s start-server: %v: %s", bin, port, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// hostQuery sends a host request and reads its hex4-prefixed answer.
func (c *Client) hostQuery(ctx context.Context, req, serial string) (string, error) {
	cn, err := c.dial(ctx, req, serial)
	if err != nil {
		return "", err
	}
	defer cn.Close()
	if err := cn.request(req); err != nil {
		return "", err
	}
	return cn.readString()
}

// Version is the server's internal version (host:version), e.g. 41.
func (c *Client) Version(ctx context.Context) (int, error) {
	s, err := c.hostQuery(ctx, "host:version", "")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 16, 16)
	if err != nil {
		return 0, &OpError{Op: "host:version", Kind: ErrProtocol, Msg: fmt.Sprintf("version %q", s)}
	}
	return int(v), nil
}

// Devices lists the devices the server knows (host:devices-l).
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	s, err := c.hostQuery(ctx, "host:devices-l", "")
	if err != nil {
		return nil, err
	}
	return parseDevices(s)
}

// Connect asks the server to connect to a device over TCP
// (host:connect:HOST:PORT). It returns once the server has answered; the
// device may still be handshaking: see Device.WaitFor.
func (c *Client) Connect(ctx context.Context, hostport string) error {
	req := "host:connect:" + hostport
	s, err := c.hostQuery(ctx, req, "")
	if err != nil {
		return err
	}
	if strings.HasPrefix(s, "connected to") || strings.HasPrefix(s, "already connected to") {
		return nil
	}
	kind := error(ErrFailed)
	if strings.Contains(s, "failed to authenticate") {
		// The device asked for a key and accepted none (adb 29 waits for
		// the handshake): it stays listed as unauthorized.
		kind = ErrUnauthorized
	}
	return &OpError{Op: req, Serial: hostport, Kind: kind, Msg: s}
}

// Disconnect asks the server to drop a TCP device (host:disconnect:HOST:PORT).
func (c *Client) Disconnect(ctx context.Context, hostport string) error {
	req := "host:disconnect:" + hostport
	s, err := c.hostQuery(ctx, req, "")
	if err != nil {
		return err
	}
	if strings.HasPrefix(s, "disconnected") {
		return nil
	}
	kind := error(ErrFailed)
	if strings.Contains(s, "no such device") {
		kind = ErrNoDevice
	}
	return &OpError{Op: req, Serial: hostport, Kind: kind, Msg: s}
}

// Reconnect disconnects a TCP device and connects it again: how to get
// a device back that the server holds "offline" after its link dropped
// (adb 29's server does not retry such a device by itself).
//
// The server answers host:disconnect before it has removed the device:
// a connect sent at once can be told "already connected" by the old,
// dying transport, and the device then vanishes. So Reconnect waits
// until the server no longer lists the device before it connects.
func (c *Client) Reconnect(ctx context.Context, hostport string) error {
	if err := c.Disconnect(ctx, hostport); err != nil && !errors.Is(err, ErrNoDevice) {
		return err
	}
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		devs, err := c.Devices(ctx)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(devs, func(d DeviceInfo) bool { return d.Serial == hostport }) {
			break
		}
		select {
		case <-ctx.Done():
			return &OpError{Op: "host:disconnect:" + hostport, Serial: hostport, Kind: ctx.Err(),
				Msg: "the server still lists the device after disconnecting it"}
		case <-time.After(delay):
		}
	}
	return c.Connect(ctx, hostport)
}

// Device returns a handle on the device with this serial; it does not
// talk to the server.
func (c *Client) Device(serial string) *Device {
	return &Device{c: c, serial: serial}
}
