package cdppipe

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
)

func TestReply(t *testing.T) {
	for _, tc := range []struct {
		msg     string
		ok      bool
		id      int64
		session string
		result  string
	}{
		{`{"id":7,"result":{}}`, true, 7, "", `{}`},
		{`{"id":12,"result":{"nodes":[{"a":"}\""}]},"sessionId":"8A1B"}`, true, 12, "8A1B", `{"nodes":[{"a":"}\""}]}`},
		// a result that holds a session of its own, from the browser
		{`{"id":3,"result":{"sessionId":"S1"}}`, true, 3, "", `{"sessionId":"S1"}`},
		{`{"id":3,"result":{"targetId":"T","sessionId":"S1"}}`, true, 3, "", `{"targetId":"T","sessionId":"S1"}`},
		{`{"id":3,"result":{"targetId":"T","sessionId":"S1"},"sessionId":"S2"}`, true, 3, "S2", `{"targetId":"T","sessionId":"S1"}`},
		// not the shape: decoded in full instead
		{`{"id":3,"error":{"code":-32000,"message":"no"}}`, false, 0, "", ""},
		{`{"method":"Page.loadEventFired","params":{"timestamp":1}}`, false, 0, "", ""},
		{`{"id":3,"result":{},"sessionId":"S","method":"x"}`, false, 0, "", ""},
		{`{"id":3,"result":{},"method":"x"}`, false, 0, "", ""},
		{`{"id":3,"result":{},"sessionId":"S\"x"}`, false, 0, "", ""},
		{`{"id":3,"result":[]}`, false, 0, "", ""},
		{`{"id":3,"result":"x"}`, false, 0, "", ""},
		{`{"id":03,"result":{}}`, false, 0, "", ""},
		{`{"id":-3,"result":{}}`, false, 0, "", ""},
		{`{"id":3,"result":{} }`, false, 0, "", ""},
		{`{"id":3,"result":`, false, 0, "", ""},
		{`{"id":3}`, false, 0, "", ""},
		{`{"id":99999999999999999999,"result":{}}`, false, 0, "", ""},
		{``, false, 0, "", ""},
	} {
		var msg cdproto.Message
		ok := reply([]byte(tc.msg), &msg)
		if ok != tc.ok {
			t.Errorf("reply(%s) = %v, want %v", tc.msg, ok, tc.ok)
			continue
		}
		if ok && (msg.ID != tc.id || string(msg.SessionID) != tc.session || string(msg.Result) != tc.result || msg.Method != "" || msg.Error != nil) {
			t.Errorf("reply(%s) = id %d session %q result %s", tc.msg, msg.ID, msg.SessionID, msg.Result)
		}
	}
}

// FuzzReply checks that a message reply reads agrees with the full decode
// wherever the full decode succeeds.
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		`{"id":7,"result":{}}`,
		`{"id":12,"result":{"a":[1,"}"]},"sessionId":"8A1B"}`,
		`{"id":3,"result":{"targetId":"T","sessionId":"S1"}}`,
		`{"id":3,"result":{"sessionId":"S1"},"sessionId":"S2"}`,
		`{"id":3,"error":{"code":1,"message":"m"},"sessionId":"S"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast cdproto.Message
		if !reply(b, &fast) {
			return
		}
		var full cdproto.Message
		if jsonv2.Unmarshal(b, &full, chromedp.DefaultUnmarshalOptions) != nil {
			return // the caller's decode of the result finds what is wrong
		}
		if fast.ID != full.ID || fast.SessionID != full.SessionID || !bytes.Equal(fast.Result, full.Result) ||
			full.Method != "" || full.Error != nil || full.Params != nil {
			t.Errorf("%s: read as id %d session %q result %s; decoded as %+v", b, fast.ID, fast.SessionID, fast.Result, full)
		}
	})
}

// pipeConn is a Conn whose other ends the test holds: it writes what the
// browser would send to in, and reads what the Conn wrote from out.
func pipeConn(t *testing.T) (c *Conn, in io.WriteCloser, out io.ReadCloser) {
	t.Helper()
	r, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c = NewConn(r, w)
	t.Cleanup(func() { c.Close(); in.Close(); out.Close() })
	return c, in, out
}

func TestConnReads(t *testing.T) {
	c, in, _ := pipeConn(t)
	long := `{"id":2,"result":{"data":"` + strings.Repeat("x", 3*readBuffer) + `"},"sessionId":"AB"}`
	go func() {
		io.WriteString(in, "\x00")                                                // an empty message is skipped
		io.WriteString(in, `{"method":"Page.frameNavigated","params":{}}`+"\x00") // an event, decoded in full
		for i := 0; i < len(long); i += 4096 {                                    // a long reply, in pieces
			io.WriteString(in, long[i:min(len(long), i+4096)])
		}
		io.WriteString(in, "\x00")
		io.WriteString(in, `{"id":3,"error":{"code":-32601,"message":"no such method"}}`+"\x00")
		io.WriteString(in, `{"id":4,"result":{}`) // cut off
		in.Close()
	}()
	ctx := context.Background()
	var m cdproto.Message
	if err := c.Read(ctx, &m); err != nil || m.Method != "Page.frameNavigated" || m.ID != 0 {
		t.Fatalf("event: %+v, %v", m, err)
	}
	if err := c.Read(ctx, &m); err != nil || m.ID != 2 || m.SessionID != "AB" || m.Method != "" || len(m.Result) != len(long)-len(`{"id":2,"result":`)-len(`,"sessionId":"AB"}`) {
		t.Fatalf("long reply: id %d session %q result of %d bytes, %v", m.ID, m.SessionID, len(m.Result), err)
	}
	var res struct {
		Data string `json:"data"`
	}
	if err := jsonv2.Unmarshal(m.Result, &res); err != nil || len(res.Data) != 3*readBuffer {
		t.Fatalf("the long reply's result: %d bytes, %v", len(res.Data), err)
	}
	if err := c.Read(ctx, &m); err != nil || m.ID != 3 || m.Error == nil || m.Error.Code != -32601 || m.Result != nil {
		t.Fatalf("error reply: %+v, %v", m, err)
	}
	if err := c.Read(ctx, &m); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a message cut off: %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// TestConnKeepsResults checks that a result stays as it was after later
// reads: the caller decodes it while the next message comes in.
func TestConnKeepsResults(t *testing.T) {
	c, in, _ := pipeConn(t)
	go func() {
		for _, s := range []string{`{"id":1,"result":{"v":"first"}}`, `{"id":2,"result":{"v":"other"}}`} {
			io.WriteString(in, s+"\x00")
		}
	}()
	var first, second cdproto.Message
	if err := c.Read(context.Background(), &first); err != nil {
		t.Fatal(err)
	}
	if err := c.Read(context.Background(), &second); err != nil {
		t.Fatal(err)
	}
	if string(first.Result) != `{"v":"first"}` || string(second.Result) != `{"v":"other"}` {
		t.Errorf("results %s and %s", first.Result, second.Result)
	}
}

func TestConnWrites(t *testing.T) {
	c, _, out := pipeConn(t)
	msg := &cdproto.Message{ID: 5, SessionID: "S", Method: "Page.navigate", Params: []byte(`{"url":"about:blank"}`)}
	if err := c.Write(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	c.w.Close()
	got, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":5,"sessionId":"S","method":"Page.navigate","params":{"url":"about:blank"}}` + "\x00"; string(got) != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
