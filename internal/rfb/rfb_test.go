package rfb

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeServer listens on a loopback port and runs handle on the first
// connection; the test ends only after handle has returned.
func fakeServer(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		handle(c)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

func readN(t *testing.T, r io.Reader, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Errorf("server: reading %d bytes: %v", n, err)
	}
	return b
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func serverInit(w, h int, name string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(w))
	b = binary.BigEndian.AppendUint16(b, uint16(h))
	b = append(b, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0)
	b = append(b, u32(uint32(len(name)))...)
	return append(b, name...)
}

// setupLen is the length of SetPixelFormat, SetEncodings (six) and the
// first FramebufferUpdateRequest.
const setupLen = 20 + 4 + 6*4 + 10

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"RFB 003.008\n", 3, 8, true},
		{"RFB 003.889\n", 3, 889, true},
		{"RFB 004.001\n", 4, 1, true},
		{"RFB 002.000\n", 0, 0, false},
		{"RFB 003.00x\n", 0, 0, false},
		{"HTTP/1.1 200", 0, 0, false},
		{"RFB 003.008", 0, 0, false},
	}
	for _, tt := range tests {
		major, minor, err := parseVersion([]byte(tt.in))
		if (err == nil) != tt.ok || major != tt.major || minor != tt.minor {
			t.Errorf("parseVersion(%q) = %d, %d, %v; want %d, %d, ok %v", tt.in, major, minor, err, tt.major, tt.minor, tt.ok)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	f.Add([]byte("RFB 003.008\n"))
	f.Add([]byte("RFB 003.889\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		major, minor, err := parseVersion(b)
		if err == nil && (major < 3 || minor < 0 || len(b) != 12) {
			t.Fatalf("parseVersion(%q) = %d.%d", b, major, minor)
		}
	})
}

func TestVNCAuthResponse(t *testing.T) {
	// Computed with openssl enc -des-ecb -nopad -K cea6c64ea62e0000 (the
	// bit-reversed "secret") on the bytes 00..0f.
	var challenge [16]byte
	for i := range challenge {
		challenge[i] = byte(i)
	}
	want, _ := hex.DecodeString("ee22539f33a5983ec12f9c2edbc995dd")
	if got := vncAuthResponse("secret", challenge); !bytes.Equal(got, want) {
		t.Errorf("response = %x, want %x", got, want)
	}
	// Only the first 8 bytes of the password count.
	if !bytes.Equal(vncAuthResponse("abcdefgh", challenge), vncAuthResponse("abcdefghXYZ", challenge)) {
		t.Error("bytes after the eighth changed the response")
	}
}

func TestHandshake(t *testing.T) {
	tests := []struct {
		name     string
		offer    string
		reply    string
		password string
		// security is what the server sends after the version exchange;
		// pick is the type the client must choose (0 for version 3.3).
		security []byte
		pick     byte
		result   bool // the server sends a SecurityResult
		wantErr  string
	}{
		{name: "3.8 none", offer: "RFB 003.008\n", reply: "RFB 003.008\n", security: []byte{1, 1}, pick: 1, result: true},
		{name: "3.7 none", offer: "RFB 003.007\n", reply: "RFB 003.007\n", security: []byte{1, 1}, pick: 1},
		{name: "3.3 none", offer: "RFB 003.003\n", reply: "RFB 003.003\n", security: u32(1)},
		{name: "3.5 as 3.3", offer: "RFB 003.005\n", reply: "RFB 003.003\n", security: u32(1)},
		{name: "Apple 3.889", offer: "RFB 003.889\n", reply: "RFB 003.008\n", security: []byte{2, 30, 1}, pick: 1, result: true},
		{name: "3.8 auth", offer: "RFB 003.008\n", reply: "RFB 003.008\n", password: "secret", security: []byte{2, 1, 2}, pick: 2, result: true},
		{name: "3.3 auth", offer: "RFB 003.003\n", reply: "RFB 003.003\n", password: "secret", security: u32(2), result: true},
		{name: "password but only none", offer: "RFB 003.008\n", reply: "RFB 003.008\n", password: "x", security: []byte{1, 1}, pick: 1, result: true},
		{name: "no password for auth", offer: "RFB 003.008\n", reply: "RFB 003.008\n", security: []byte{1, 2}, wantErr: "rfb: security: server requires VNC Authentication"},
		{name: "unsupported types", offer: "RFB 003.008\n", reply: "RFB 003.008\n", security: []byte{2, 18, 19}, wantErr: "rfb: security: server offers security types [18 19]"},
		{name: "refused", offer: "RFB 003.008\n", reply: "RFB 003.008\n", security: append([]byte{0, 0, 0, 0, 4}, "busy"...), wantErr: "rfb: security: server refused the connection: busy"},
		{name: "3.3 refused", offer: "RFB 003.003\n", reply: "RFB 003.003\n", security: append(u32(0), append(u32(3), "bad"...)...), wantErr: "refused the connection: bad"},
		{name: "not RFB", offer: "SSH-2.0-xx\r\n", wantErr: "rfb: version: server sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeServer(t, func(c net.Conn) {
				c.Write([]byte(tt.offer))
				if tt.reply == "" {
					return
				}
				if got := string(readN(t, c, 12)); got != tt.reply {
					t.Errorf("client version = %q, want %q", got, tt.reply)
					return
				}
				c.Write(tt.security)
				if tt.wantErr != "" {
					io.Copy(io.Discard, c)
					return
				}
				if tt.pick != 0 {
					if got := readN(t, c, 1)[0]; got != tt.pick {
						t.Errorf("client chose security type %d, want %d", got, tt.pick)
					}
				}
				if tt.password != "" && (tt.pick == 2 || tt.pick == 0) {
					var ch [16]byte
					copy(ch[:], "0123456789abcdef")
					c.Write(ch[:])
					if got := readN(t, c, 16); !bytes.Equal(got, vncAuthResponse(tt.password, ch)) {
						t.Errorf("auth response %x is wrong", got)
					}
				}
				if tt.result {
					c.Write(u32(0))
				}
				if got := readN(t, c, 1)[0]; got != 1 {
					t.Errorf("ClientInit shared flag = %d, want 1", got)
				}
				c.Write(serverInit(320, 200, "desk"))
				setup := readN(t, c, setupLen)
				wantPF := []byte{0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0}
				if !bytes.Equal(setup[:20], wantPF) {
					t.Errorf("SetPixelFormat = %v, want %v", setup[:20], wantPF)
				}
				var encs []int32
				for i := 24; i < 48; i += 4 {
					encs = append(encs, int32(binary.BigEndian.Uint32(setup[i:])))
				}
				if want := []int32{16, 1, 0, -223, -308, -224}; !slices.Equal(encs, want) {
					t.Errorf("encodings = %v, want %v", encs, want)
				}
				if want := []byte{3, 0, 0, 0, 0, 0, 1, 64, 0, 200}; !bytes.Equal(setup[48:], want) {
					t.Errorf("first request = %v, want %v", setup[48:], want)
				}
				c.Write(fbUpdate(rawRect(image.Rect(0, 0, 320, 200), gradient)))
				io.Copy(io.Discard, c)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, Config{Password: tt.password, Shared: true})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Dial error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Name() != "desk" {
				t.Errorf("Name = %q, want desk", c.Name())
			}
			if w, h := c.Size(); w != 320 || h != 200 {
				t.Errorf("Size = %dx%d, want 320x200", w, h)
			}
		})
	}
}

// acceptNone runs a 3.8 handshake with security None and a w x h
// framebuffer, up to and including the client's first request, which it
// answers with a black screen.
func acceptNone(t *testing.T, c net.Conn, w, h int) {
	c.Write([]byte("RFB 003.008\n"))
	readN(t, c, 12)
	c.Write([]byte{1, 1})
	readN(t, c, 1)
	c.Write(u32(0))
	readN(t, c, 1)
	c.Write(serverInit(w, h, "fake"))
	readN(t, c, setupLen)
	c.Write(fbUpdate(rawRect(image.Rect(0, 0, w, h), func(x, y int) color.RGBA { return color.RGBA{} })))
}

func TestWrongPassword(t *testing.T) {
	for _, minor := range []string{"003.003", "003.008"} {
		t.Run(minor, func(t *testing.T) {
			addr := fakeServer(t, func(c net.Conn) {
				c.Write([]byte("RFB " + minor + "\n"))
				readN(t, c, 12)
				if minor == "003.008" {
					c.Write([]byte{1, 2})
					readN(t, c, 1)
				} else {
					c.Write(u32(2))
				}
				c.Write(make([]byte, 16))
				readN(t, c, 16)
				c.Write(u32(1))
				if minor == "003.008" {
					c.Write(append(u32(14), "wrong password"...))
				}
			})
			_, err := Dial(context.Background(), addr, Config{Password: "nope"})
			if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "rfb: auth:") {
				t.Fatalf("Dial error = %v, want ErrAuth from step auth", err)
			}
		})
	}
}

func TestRefreshAppliesUpdate(t *testing.T) {
	// The server answers the first request with black and every
	// non-incremental request after it with the next colour; incremental
	// requests get nothing. Refresh must return only once the answer to
	// its own request is in.
	colours := []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}
	full := image.Rect(0, 0, 8, 6)
	addr := fakeServer(t, func(c net.Conn) {
		acceptNone(t, c, 8, 6)
		next := 0
		send := func() {
			col := colours[next%len(colours)]
			next++
			c.Write(fbUpdate(rawRect(full, func(x, y int) color.RGBA { return col })))
		}
		for {
			var m [1]byte
			if _, err := io.ReadFull(c, m[:]); err != nil {
				return
			}
			switch m[0] {
			case 3:
				req := readN(t, c, 9)
				if req[0] == 0 {
					send()
				}
			default:
				t.Errorf("unexpected client message %d", m[0])
				return
			}
		}
	})
	c, err := Dial(context.Background(), addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= 4; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Refresh(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		want := colours[(i-1)%len(colours)]
		if got := c.Snapshot().RGBAAt(3, 3); got != want {
			t.Fatalf("after Refresh %d pixel = %v, want %v", i, got, want)
		}
	}
	if c.BytesRead() < int64(5*8*6*4) {
		t.Errorf("BytesRead = %d, want at least the five updates", c.BytesRead())
	}
}

func TestRefreshWithoutAnswer(t *testing.T) {
	stop := make(chan struct{})
	addr := fakeServer(t, func(c net.Conn) {
		acceptNone(t, c, 8, 6)
		<-stop // reads nothing more, sends nothing
	})
	defer close(stop)
	c, err := Dial(context.Background(), addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = c.Refresh(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no framebuffer update from the server") {
		t.Fatalf("Refresh error = %v, want the deadline, wrapped", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err = %v, want ErrClosed", c.Err())
	}
	if err := c.Key(0x61, true); !errors.Is(err, ErrClosed) {
		t.Errorf("Key after Close = %v, want ErrClosed", err)
	}
}

func TestServerStallsMidMessage(t *testing.T) {
	// A server that stops in the middle of a message ends the connection
	// after Config.Timeout instead of leaving the reader blocked.
	stop := make(chan struct{})
	addr := fakeServer(t, func(c net.Conn) {
		acceptNone(t, c, 8, 6)
		c.Write(fbUpdate(rectHeader(0, 0, 8, 6, encRaw))) // no pixels follow
		<-stop
	})
	defer close(stop)
	c, err := Dial(context.Background(), addr, Config{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-c.Done()
	var ne net.Error
	if !errors.Is(c.Err(), ErrClosed) || !errors.As(c.Err(), &ne) || !ne.Timeout() {
		t.Fatalf("Err = %v, want ErrClosed wrapping a timeout", c.Err())
	}
}

func TestServerCloses(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn) {
		acceptNone(t, c, 8, 6)
		c.Write([]byte{3, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 0xff})
	})
	c, err := Dial(context.Background(), addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-c.Done()
	// The server closes after writing: the client reads EOF, or a reset
	// where the close reaches it before the last bytes were read.
	if !errors.Is(c.Err(), ErrClosed) || !errors.Is(c.Err(), io.EOF) && !errors.Is(c.Err(), syscall.ECONNRESET) {
		t.Errorf("Err = %v, want ErrClosed wrapping EOF or a reset", c.Err())
	}
	if got := c.Clipboard(); got != "abÿ" {
		t.Errorf("Clipboard = %q, want %q", got, "abÿ")
	}
	if err := c.Pointer(1, 1, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Pointer after the end = %v, want ErrClosed", err)
	}
	if err := c.Refresh(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Refresh after the end = %v, want ErrClosed", err)
	}
}

func TestClientMessages(t *testing.T) {
	got := make(chan []byte, 1)
	addr := fakeServer(t, func(c net.Conn) {
		acceptNone(t, c, 8, 6)
		// Pointer, key, cut text header and text, with the incremental
		// update requests left out wherever they come.
		var b []byte
		for len(b) < 6+8+8+8 {
			m := readN(t, c, 1)
			switch m[0] {
			case 3:
				readN(t, c, 9)
			case 5:
				b = append(append(b, m...), readN(t, c, 5)...)
			case 4:
				b = append(append(b, m...), readN(t, c, 7)...)
			case 6:
				h := readN(t, c, 7)
				b = append(append(append(b, m...), h...), readN(t, c, int(binary.BigEndian.Uint32(h[3:])))...)
			default:
				t.Errorf("unexpected client message %d", m[0])
				got <- b
				return
			}
		}
		got <- b
	})
	c, err := Dial(context.Background(), addr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Pointer(300, 2, 1|4); err != nil {
		t.Fatal(err)
	}
	if err := c.Key(0xff0d, true); err != nil {
		t.Fatal(err)
	}
	if err := c.SetClipboard("hé→x€yz!"); err != nil {
		t.Fatal(err)
	}
	want := []byte{5, 5, 1, 44, 0, 2, 4, 1, 0, 0, 0, 0, 0xff, 0x0d, 6, 0, 0, 0, 0, 0, 0, 8, 'h', 0xe9, '?', 'x', '?', 'y', 'z', '!'}
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("client sent %v, want %v", b, want)
	}
	if err := c.Pointer(-1, 0, 0); err == nil {
		t.Error("Pointer(-1, 0) succeeded")
	}
}
