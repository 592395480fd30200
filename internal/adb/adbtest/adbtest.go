// Package adbtest is a stand-in Android device for tests: it listens on
// 127.0.0.1 and speaks the device side of the ADB transport protocol
// (AOSP adb/protocol.txt), so that a real adb server accepts it with
// `adb connect 127.0.0.1:PORT`. It serves shell (protocol v2 and plain),
// exec and sync (STAT, STA2, LST2, LIST, RECV, SEND) over an in-memory file
// system, with a handler the test gives playing the shell.
package adbtest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Handler plays the device's shell: it gets the command line and what was
// written to its stdin and returns what the command writes and its exit
// status. It runs for shell,v2, shell: and exec: services; for the last
// two stdin is empty and stderr follows stdout in the one stream.
type Handler func(cmd string, stdin []byte) (stdout, stderr []byte, exit int)

// Options configure a Device.
type Options struct {
	Serial  string // reported in the banner ("" is allowed, as adbd does)
	Product string // ro.product.name; default "proctor_test"
	Model   string // ro.product.model; default "Proctor_Test_Device"
	Device  string // ro.product.device; default "proctor"
	// Features advertised in the banner; nil means DefaultFeatures. Leave
	// out "shell_v2" to play a device older than Android 7.
	Features []string
	// Shell plays the shell; nil answers every command with exit 127.
	Shell Handler
	// FS, when set, is the file system sync serves (push, pull, stat,
	// list) instead of the Device's own map: a scripted phone whose shell
	// reads the same files.
	FS FS
	// Listen is the address to listen on, HOST:PORT; "" is 127.0.0.1:0,
	// a free port of the loopback.
	Listen string
	// Unauthorized makes the device answer the host's CNXN with AUTH
	// tokens and never accept, as a device whose user has not allowed this
	// host; `adb devices` then shows it "unauthorized".
	Unauthorized bool
}

// DefaultFeatures are the features a Device advertises by default.
var DefaultFeatures = []string{"shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir", "apex", "abb", "abb_exec"}

// FS is a file system a Device can serve sync from, by absolute device
// paths.
type FS interface {
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte, mode os.FileMode) error
	Stat(name string) (os.FileInfo, error)
	ReadDir(name string) ([]os.DirEntry, error)
}

// File is a file of the stand-in's file system.
type File struct {
	Data    []byte
	Mode    os.FileMode // permissions; 0 means 0644
	ModTime time.Time
}

// Device is a running stand-in device.
type Device struct {
	opts   Options
	banner string
	ln     net.Listener

	mu       sync.Mutex
	files    map[string]File
	requests []string
	conns    map[*transport]struct{}
	closed   bool
	wg       sync.WaitGroup // the listener and the connections
	svcs     sync.WaitGroup // services (and the handlers they run)
}

// Start starts a Device listening on opts.Listen (127.0.0.1:0 when
// empty); it is closed when the test ends.
func Start(t testing.TB, opts Options) *Device {
	t.Helper()
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// New starts a Device listening on opts.Listen (127.0.0.1:0 when empty).
// The caller must Close it.
func New(opts Options) (*Device, error) {
	if opts.Product == "" {
		opts.Product = "proctor_test"
	}
	if opts.Model == "" {
		opts.Model = "Proctor_Test_Device"
	}
	if opts.Device == "" {
		opts.Device = "proctor"
	}
	if opts.Features == nil {
		opts.Features = DefaultFeatures
	}
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, err
	}
	d := &Device{
		opts: opts,
		ln:   ln,
		banner: fmt.Sprintf("device:%s:ro.product.name=%s;ro.product.model=%s;ro.product.device=%s;features=%s",
			opts.Serial, opts.Product, opts.Model, opts.Device, strings.Join(opts.Features, ",")),
		files: map[string]File{},
		conns: map[*transport]struct{}{},
	}
	d.wg.Add(1)
	go d.accept()
	return d, nil
}

// Addr is the address to give `adb connect`, "127.0.0.1:PORT".
func (d *Device) Addr() string { return d.ln.Addr().String() }

func (d *Device) accept() {
	defer d.wg.Done()
	for {
		nc, err := d.ln.Accept()
		if err != nil {
			return
		}
		t := newTransport(d, nc)
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			nc.Close()
			return
		}
		d.conns[t] = struct{}{}
		d.wg.Add(1)
		d.mu.Unlock()
		go func() {
			defer d.wg.Done()
			t.serve()
			d.mu.Lock()
			delete(d.conns, t)
			d.mu.Unlock()
		}()
	}
}

// Drop closes every connection the device has, as a cable pulled out or
// a network drop would; it keeps listening, so the server may reconnect.
func (d *Device) Drop() {
	d.mu.Lock()
	conns := slices.Collect(maps.Keys(d.conns))
	d.mu.Unlock()
	for _, t := range conns {
		t.close()
	}
}

// Requests are what the device was asked, in order: each service a host
// opened, as its destination ("shell,v2,raw:wm size", "exec:screencap -p",
// "sync:"), and each sync request with its path ("sync SEND
// /sdcard/a.txt,33188", "sync RECV /sdcard/a.txt").
func (d *Device) Requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.requests)
}

func (d *Device) record(r string) {
	d.mu.Lock()
	d.requests = append(d.requests, r)
	d.mu.Unlock()
}

// Conns is the number of open connections (normally the adb server's one).
func (d *Device) Conns() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

// Close stops listening and closes every connection: the device is gone.
// It waits for the device's goroutines; a Handler that does not return
// within 5 seconds is left running.
func (d *Device) Close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	d.mu.Unlock()
	d.ln.Close()
	d.Drop()
	d.wg.Wait()
	done := make(chan struct{})
	go func() { d.svcs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// SetFile puts a file with mode 0644 and the current time.
func (d *Device) SetFile(name string, data []byte) {
	d.PutFile(name, File{Data: data})
}

// PutFile puts a file.
func (d *Device) PutFile(name string, f File) {
	if f.Mode == 0 {
		f.Mode = 0o644
	}
	if f.ModTime.IsZero() {
		f.ModTime = time.Now()
	}
	f.Data = slices.Clone(f.Data)
	if d.opts.FS != nil {
		d.opts.FS.WriteFile(path.Clean("/"+name), f.Data, f.Mode)
		return
	}
	d.mu.Lock()
	d.files[path.Clean("/"+name)] = f
	d.mu.Unlock()
}

// File returns a file, if there is one.
func (d *Device) File(name string) (File, bool) {
	if d.opts.FS != nil {
		f, dir, ok := d.lookup(name)
		return f, ok && !dir
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.files[path.Clean("/"+name)]
	f.Data = slices.Clone(f.Data)
	return f, ok
}

// RemoveFile removes a file.
func (d *Device) RemoveFile(name string) {
	d.mu.Lock()
	delete(d.files, path.Clean("/"+name))
	d.mu.Unlock()
}

// lookup gives a file or, for a path some file is under, a directory.
func (d *Device) lookup(name string) (f File, dir, ok bool) {
	name = path.Clean("/" + name)
	if fs := d.opts.FS; fs != nil {
		fi, err := fs.Stat(name)
		if err != nil {
			return File{}, false, false
		}
		if fi.IsDir() {
			return File{Mode: fi.Mode().Perm(), ModTime: fi.ModTime()}, true, true
		}
		data, err := fs.ReadFile(name)
		if err != nil {
			return File{}, false, false
		}
		return File{Data: data, Mode: fi.Mode().Perm(), ModTime: fi.ModTime()}, false, true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.files[name]; ok {
		return f, false, true
	}
	if name == "/" {
		return File{Mode: 0o755}, true, true
	}
	for n := range d.files {
		if strings.HasPrefix(n, name+"/") {
			return File{Mode: 0o755}, true, true
		}
	}
	return File{}, false, false
}

// list gives the entries directly under dir.
func (d *Device) list(dir string) (map[string]File, map[string]bool) {
	dir = path.Clean("/" + dir)
	prefix := strings.TrimSuffix(dir, "/") + "/"
	files, dirs := map[string]File{}, map[string]bool{}
	if fs := d.opts.FS; fs != nil {
		entries, _ := fs.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				dirs[e.Name()] = true
			} else if f, _, ok := d.lookup(prefix + e.Name()); ok {
				files[e.Name()] = f
			}
		}
		return files, dirs
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for n, f := range d.files {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		if first, _, sub := strings.Cut(rest, "/"); sub {
			dirs[first] = true
		} else {
			files[rest] = f
		}
	}
	return files, dirs
}

func (d *Device) run(cmd string, stdin []byte) (stdout, stderr []byte, exit int) {
	if d.opts.Shell == nil {
		return nil, []byte("/system/bin/sh: " + cmd + ": not found\n"), 127
	}
	return d.opts.Shell(cmd, stdin)
}

func randomToken() []byte {
	b := make([]byte, 20)
	rand.Read(b)
	return b
}

var errStreamClosed = errors.New("adbtest: stream closed")

// UseServer points the test's adb clients at an adb server of its own: a
// free port in $ANDROID_ADB_SERVER_PORT, HOME and TMPDIR in temporary
// folders (the server's keys and log), $ADB_SERVER_SOCKET unset, started by
// the first client that needs it (Proctor's or the adb command's) and
// killed when the test ends. It skips the test where adb is
// not installed. It returns the server's address.
func UseServer(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("adb")
	if err != nil {
		t.Skip("adb is not installed (scripts/test.sh installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	// Unset, not empty: adb's command-line client takes an empty
	// $ADB_SERVER_SOCKET for an address. t.Setenv restores it afterwards.
	t.Setenv("ADB_SERVER_SOCKET", "")
	os.Unsetenv("ADB_SERVER_SOCKET")
	t.Setenv("ANDROID_ADB_SERVER_PORT", port)
	t.Cleanup(func() {
		c := exec.Command(bin, "-P", port, "kill-server")
		c.WaitDelay = 2 * time.Second
		c.Run()
	})
	return "127.0.0.1:" + port
}
