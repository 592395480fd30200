package rfb

// Tests against real VNC servers from Debian: x11vnc on Xvfb, and
// TigerVNC's Xvnc. A missing binary skips the test that needs it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"
)

func init() {
	// xgb logs that there is no authority file; the tests report their
	// own errors.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// waitBound bounds every wait for a server in these tests; it is a guard
// against hanging, not an assertion about speed.
const waitBound = 30 * time.Second

func needBins(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed", n)
		}
	}
}

var displayMu sync.Mutex

// freeDisplay picks a display number with no X socket or lock file.
func freeDisplay(t testing.TB) int {
	t.Helper()
	displayMu.Lock()
	defer displayMu.Unlock()
	for range 1000 {
		n := 200 + rand.IntN(700)
		_, err1 := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n))
		_, err2 := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n))
		if os.IsNotExist(err1) && os.IsNotExist(err2) {
			return n
		}
	}
	t.Fatal("no free X display number")
	return 0
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output; exec copies into it from
// its own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start starts a process in its own process group; cleanup continues it
// (if a test stopped it), kills the group and waits for it.
func start(t testing.TB, stdin string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out lockedBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			text := out.String()
			t.Logf("output of %s (the end):\n%s", name, text[max(0, len(text)-3000):])
		}
	})
	return cmd
}

// waitFor polls cond until it holds or waitBound passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// desktop is an X display with a VNC server showing it.
type desktop struct {
	display string
	addr    string
	server  *exec.Cmd // the VNC server process
	x       *xgb.Conn
	root    xproto.Window
	scraper bool // the server polls the screen (x11vnc) rather than owning it
}

// waitX waits until display n is up and checks that the server holding
// it is the one started (pid), not another test's.
func waitX(t testing.TB, n int, pid int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("X display :%d", n), func() bool {
		_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n))
		return err == nil
	})
	lock, err := os.ReadFile(fmt.Sprintf("/tmp/.X%d-lock", n))
	if err != nil {
		t.Fatalf("X display :%d has no lock file: %v", n, err)
	}
	if got, _ := strconv.Atoi(strings.TrimSpace(string(lock))); got != pid {
		t.Fatalf("X display :%d belongs to process %d, not to the server started (%d)", n, got, pid)
	}
}

func waitTCP(t testing.TB, addr string) {
	t.Helper()
	waitFor(t, "VNC server at "+addr, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (d *desktop) connectX(t testing.TB) {
	t.Helper()
	x, err := xgb.NewConnDisplay(d.display)
	if err != nil {
		t.Fatalf("connecting to X display %s: %v", d.display, err)
	}
	t.Cleanup(x.Close)
	d.x = x
	d.root = xproto.Setup(x).DefaultScreen(x).Root
}

// startX11vnc starts Xvfb and x11vnc on it; password "" means -nopw.
func startX11vnc(t testing.TB, password string) *desktop {
	t.Helper()
	needBins(t, "Xvfb", "x11vnc")
	n := freeDisplay(t)
	xvfb := start(t, "", "Xvfb", fmt.Sprintf(":%d", n), "-screen", "0", "800x600x24", "-nolisten", "tcp")
	waitX(t, n, xvfb.Process.Pid)
	port := freePort(t)
	args := []string{"-display", fmt.Sprintf(":%d", n), "-rfbport", strconv.Itoa(port), "-localhost", "-forever", "-shared", "-nocursor"}
	if password == "" {
		args = append(args, "-nopw")
	} else {
		args = append(args, "-passwd", password)
	}
	d := &desktop{display: fmt.Sprintf(":%d", n), addr: fmt.Sprintf("127.0.0.1:%d", port), scraper: true}
	d.server = start(t, "", "x11vnc", args...)
	waitTCP(t, d.addr)
	d.connectX(t)
	return d
}

// startXvnc starts TigerVNC's Xvnc; password "" means security None.
func startXvnc(t testing.TB, password string) *desktop {
	t.Helper()
	needBins(t, "Xvnc")
	n := freeDisplay(t)
	port := freePort(t)
	args := []string{fmt.Sprintf(":%d", n), "-geometry", "800x600", "-depth", "24", "-rfbport", strconv.Itoa(port), "-localhost", "-nolisten", "tcp"}
	if password == "" {
		args = append(args, "-SecurityTypes", "None")
	} else {
		pw := "vncpasswd"
		if _, err := exec.LookPath(pw); err != nil {
			pw = "tigervncpasswd"
		}
		needBins(t, pw)
		cmd := exec.Command(pw, "-f")
		cmd.Stdin = strings.NewReader(password + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s -f: %v", pw, err)
		}
		file := filepath.Join(t.TempDir(), "passwd")
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-SecurityTypes", "VncAuth", "-PasswordFile", file)
	}
	d := &desktop{display: fmt.Sprintf(":%d", n), addr: fmt.Sprintf("127.0.0.1:%d", port)}
	d.server = start(t, "", "Xvnc", args...)
	waitX(t, n, d.server.Process.Pid)
	waitTCP(t, d.addr)
	d.connectX(t)
	return d
}

// fill paints the root window one colour, as xsetroot -solid does, and
// waits until the X server has done it.
func (d *desktop) fill(t testing.TB, c color.RGBA) {
	t.Helper()
	pixel := uint32(c.R)<<16 | uint32(c.G)<<8 | uint32(c.B)
	if err := xproto.ChangeWindowAttributesChecked(d.x, d.root, xproto.CwBackPixel, []uint32{pixel}).Check(); err != nil {
		t.Fatal(err)
	}
	if err := xproto.ClearAreaChecked(d.x, false, d.root, 0, 0, 0, 0).Check(); err != nil {
		t.Fatal(err)
	}
}

// paint draws img over the whole 800x600 root window with PutImage and
// waits until the X server has done it.
func (d *desktop) paint(t testing.TB, img func(x, y int) color.RGBA) {
	t.Helper()
	gc, err := xproto.NewGcontextId(d.x)
	if err != nil {
		t.Fatal(err)
	}
	if err := xproto.CreateGCChecked(d.x, gc, xproto.Drawable(d.root), 0, nil).Check(); err != nil {
		t.Fatal(err)
	}
	defer xproto.FreeGC(d.x, gc)
	const w, h, rows = 800, 600, 50
	for y0 := 0; y0 < h; y0 += rows {
		data := make([]byte, 0, w*rows*4)
		for y := y0; y < y0+rows; y++ {
			for x := range w {
				c := img(x, y)
				data = append(data, c.B, c.G, c.R, 0)
			}
		}
		if err := xproto.PutImageChecked(d.x, xproto.ImageFormatZPixmap, xproto.Drawable(d.root), gc, w, rows, 0, int16(y0), 0, 24, data).Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkImageOf checks that a snapshot shows img everywhere.
func checkImageOf(cl *Client, img func(x, y int) color.RGBA) (bad int, first string) {
	snap := cl.Snapshot()
	for y := range snap.Rect.Dy() {
		for x := range snap.Rect.Dx() {
			want := img(x, y)
			want.A = 255
			if got := snap.RGBAAt(x, y); got != want {
				if bad == 0 {
					first = fmt.Sprintf("(%d,%d) is %v, want %v", x, y, got, want)
				}
				bad++
			}
		}
	}
	return bad, first
}

// busy is a screen with every kind of ZRLE tile: gradients, flat areas,
// stripes and few-colour patterns.
func busy(x, y int) color.RGBA {
	switch (x/100 + y/100) % 4 {
	case 0:
		return color.RGBA{uint8(x), uint8(y), uint8(x * y), 255}
	case 1:
		return color.RGBA{10, 20, 30, 255}
	case 2:
		return color.RGBA{uint8((x / 7) % 2 * 200), 90, uint8((y / 5) % 3 * 100), 255}
	}
	return color.RGBA{uint8(x % 5 * 50), uint8(y % 3 * 80), 7, 255}
}

func (d *desktop) pointer(t *testing.T) *xproto.QueryPointerReply {
	t.Helper()
	r, err := xproto.QueryPointer(d.x, d.root).Reply()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func dial(t testing.TB, addr, password string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	c, err := Dial(ctx, addr, Config{Password: password, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func refresh(t testing.TB, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkFill checks that every pixel of a snapshot is c.
func checkFill(t *testing.T, cl *Client, c color.RGBA) bool {
	t.Helper()
	img := cl.Snapshot()
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] != c.R || img.Pix[i+1] != c.G || img.Pix[i+2] != c.B || img.Pix[i+3] != 255 {
			return false
		}
	}
	return true
}

func xclip(t *testing.T, display string, args ...string) string {
	t.Helper()
	cmd := exec.Command("xclip", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, _ := cmd.Output()
	return string(out)
}

func TestServers(t *testing.T) {
	servers := []struct {
		name  string
		start func(testing.TB, string) *desktop
	}{
		{"x11vnc", startX11vnc},
		{"Xvnc", startXvnc},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			d := s.start(t, "")
			c := dial(t, d.addr, "")
			if w, h := c.Size(); w != 800 || h != 600 {
				t.Errorf("Size = %dx%d, want 800x600", w, h)
			}
			if c.Name() == "" {
				t.Error("Name is empty")
			}

			t.Run("screen", func(t *testing.T) {
				colours := []color.RGBA{{255, 0, 0, 255}, {0, 128, 255, 255}, {12, 200, 34, 255}}
				for _, col := range colours {
					d.fill(t, col)
					if d.scraper {
						// x11vnc copies the screen on its own schedule:
						// keep asking until the copy has the colour.
						waitFor(t, fmt.Sprintf("colour %v", col), func() bool {
							refresh(t, c)
							return checkFill(t, c, col)
						})
						continue
					}
					// Xvnc owns the framebuffer: one Refresh after the
					// drawing must show it.
					refresh(t, c)
					if !checkFill(t, c, col) {
						t.Fatalf("after Refresh the screen is not all %v; pixel (0,0) is %v", col, c.Snapshot().RGBAAt(0, 0))
					}
				}
			})

			t.Run("image", func(t *testing.T) {
				d.paint(t, busy)
				if d.scraper {
					waitFor(t, "the painted image", func() bool {
						refresh(t, c)
						bad, _ := checkImageOf(c, busy)
						return bad == 0
					})
					return
				}
				refresh(t, c)
				if bad, first := checkImageOf(c, busy); bad > 0 {
					t.Fatalf("after Refresh %d pixels differ; %s", bad, first)
				}
			})
			if c.dec.zrleRects.Load() == 0 {
				t.Errorf("%s sent no ZRLE rectangle", s.name)
			}

			t.Run("pointer", func(t *testing.T) {
				if err := c.Pointer(123, 45, 0); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the pointer at (123,45)", func() bool {
					p := d.pointer(t)
					return p.RootX == 123 && p.RootY == 45
				})
				if err := c.Pointer(124, 46, 1); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "button 1 down", func() bool { return d.pointer(t).Mask&xproto.KeyButMaskButton1 != 0 })
				if err := c.Pointer(124, 46, 0); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "button 1 up", func() bool { return d.pointer(t).Mask&xproto.KeyButMaskButton1 == 0 })
			})

			t.Run("key", func(t *testing.T) {
				const shiftL = 0xffe1
				if err := c.Key(shiftL, true); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "Shift down", func() bool { return d.pointer(t).Mask&xproto.KeyButMaskShift != 0 })
				if err := c.Key(shiftL, false); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "Shift up", func() bool { return d.pointer(t).Mask&xproto.KeyButMaskShift == 0 })
			})

			t.Run("clipboard", func(t *testing.T) {
				if !d.scraper {
					needBins(t, "xclip")
				}
				// Runes beyond Latin-1 travel as '?'.
				if err := c.SetClipboard("proctor ü → set"); err != nil {
					t.Fatal(err)
				}
				want := "proctor ü ? set"
				if d.scraper {
					// x11vnc stores received text in the root window's
					// CUT_BUFFER0 (as Latin-1) at once; it takes PRIMARY
					// and CLIPBOARD only once its selection window exists.
					waitFor(t, "CUT_BUFFER0 set from the client", func() bool {
						p, err := xproto.GetProperty(d.x, false, d.root, xproto.AtomCutBuffer0, xproto.AtomString, 0, 1<<16).Reply()
						return err == nil && string(p.Value) == string(stringToLatin1(want))
					})
				} else {
					// Xvnc sets CLIPBOARD (and PRIMARY).
					waitFor(t, "CLIPBOARD set from the client", func() bool {
						return xclip(t, d.display, "-o", "-selection", "clipboard") == want
					})
				}
				if d.scraper {
					// From the server: x11vnc sends CUT_BUFFER0 changes.
					text := stringToLatin1("from the desktop é")
					if err := xproto.ChangePropertyChecked(d.x, xproto.PropModeReplace, d.root, xproto.AtomCutBuffer0, xproto.AtomString, 8, uint32(len(text)), text).Check(); err != nil {
						t.Fatal(err)
					}
				} else {
					// From the server: a program owning CLIPBOARD.
					start(t, "from the desktop é", "xclip", "-quiet", "-i", "-selection", "clipboard", "-display", d.display)
				}
				waitFor(t, "ServerCutText", func() bool { return c.Clipboard() == "from the desktop é" })
			})
		})
	}
}

func TestPassword(t *testing.T) {
	servers := []struct {
		name  string
		start func(testing.TB, string) *desktop
	}{
		{"x11vnc", startX11vnc},
		{"Xvnc", startXvnc},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			d := s.start(t, "secret")
			c := dial(t, d.addr, "secret")
			refresh(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), waitBound)
			defer cancel()
			_, err := Dial(ctx, d.addr, Config{Password: "wrong"})
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("Dial with a wrong password: %v, want ErrAuth", err)
			}
			_, err = Dial(ctx, d.addr, Config{})
			if err == nil || !strings.Contains(err.Error(), "rfb: security:") {
				t.Fatalf("Dial without a password: %v, want a security error", err)
			}
		})
	}
}

func TestResize(t *testing.T) {
	d := startXvnc(t, "")
	c := dial(t, d.addr, "")
	refresh(t, c)
	if err := randr.Init(d.x); err != nil {
		t.Skipf("no RandR on Xvnc: %v", err)
	}
	if err := randr.SetScreenSizeChecked(d.x, d.root, 1024, 700, 271, 185).Check(); err != nil {
		t.Fatalf("RandR SetScreenSize 1024x700: %v", err)
	}
	waitFor(t, "the new size", func() bool {
		refresh(t, c)
		w, h := c.Size()
		return w == 1024 && h == 700
	})
	col := color.RGBA{250, 240, 10, 255}
	d.fill(t, col)
	refresh(t, c)
	if img := c.Snapshot(); img.Rect.Dx() != 1024 || img.Rect.Dy() != 700 || !checkFill(t, c, col) {
		t.Fatalf("snapshot %v is not all %v (corner %v)", img.Rect, col, img.RGBAAt(1023, 699))
	}
}

func TestServerKilled(t *testing.T) {
	d := startXvnc(t, "")
	c := dial(t, d.addr, "")
	refresh(t, c)
	d.server.Process.Kill()
	<-c.Done()
	if !errors.Is(c.Err(), ErrClosed) {
		t.Fatalf("Err = %v, want ErrClosed", c.Err())
	}
	if err := c.Pointer(1, 1, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Pointer = %v, want ErrClosed", err)
	}
	if err := c.Refresh(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Refresh = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestServerStopped(t *testing.T) {
	d := startXvnc(t, "")
	c := dial(t, d.addr, "")
	refresh(t, c)
	if err := syscall.Kill(d.server.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.Refresh(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no framebuffer update from the server") {
		t.Fatalf("Refresh = %v, want the deadline wrapped with the message", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err after Close = %v, want ErrClosed", c.Err())
	}
}

func BenchmarkRefresh(b *testing.B) {
	benchXvnc(b, func(c *Client) {
		for b.Loop() {
			if err := c.Refresh(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSnapshot(b *testing.B) {
	benchXvnc(b, func(c *Client) {
		for b.Loop() {
			c.Snapshot()
		}
	})
}

// benchXvnc runs f on a client of an 800x600 Xvnc showing the busy
// image.
func benchXvnc(b *testing.B, f func(c *Client)) {
	d := startXvnc(b, "")
	c := dial(b, d.addr, "")
	d.paint(b, busy)
	refresh(b, c)
	before := c.BytesRead()
	f(c)
	b.ReportMetric(float64(c.BytesRead()-before)/float64(b.N), "B-read/op")
}
