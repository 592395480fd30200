package cdppipe

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

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

// rawText is a RawResult that keeps the bytes it is given.
type rawText struct{ b []byte }

func (r *rawText) DecodeResult(b []byte) error { r.b = b; return nil }

// fakeBrowser answers the commands written to the Conn: a command's
// params are echoed as its result, unless its method is "Fail".
func fakeBrowser(t *testing.T, in io.Writer, out io.Reader) {
	dec := json.NewDecoder(&zeroSplitter{r: out})
	go func() {
		for {
			var m struct {
				ID        int64           `json:"id"`
				SessionID string          `json:"sessionId"`
				Method    string          `json:"method"`
				Params    json.RawMessage `json:"params"`
			}
			if dec.Decode(&m) != nil {
				return
			}
			// An event comes first, for chromedp's reader.
			io.WriteString(in, `{"method":"Page.loadEventFired","params":{"timestamp":1}}`+"\x00")
			var reply string
			switch m.Method {
			case "Fail":
				reply = fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"it failed"}}`, m.ID)
			case "Never":
				continue
			default:
				reply = fmt.Sprintf(`{"id":%d,"result":%s,"sessionId":%q}`, m.ID, cmp.Or(string(m.Params), "{}"), m.SessionID)
			}
			io.WriteString(in, reply+"\x00")
		}
	}()
}

// zeroSplitter reads messages ended by zero bytes as a stream of JSON
// values.
type zeroSplitter struct{ r io.Reader }

func (z *zeroSplitter) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	for i := range n {
		if p[i] == 0 {
			p[i] = '\n'
		}
	}
	return n, err
}

// TestCall checks the calls that bypass chromedp: their replies reach the
// caller and not Read, which still returns the other messages; an error
// reply is an error; a call ends with its context or with the connection.
func TestCall(t *testing.T) {
	c, in, out := pipeConn(t)
	fakeBrowser(t, in, out)
	events := make(chan string, 100)
	readErr := make(chan error, 1)
	go func() { // chromedp's reader
		for {
			var m cdproto.Message
			if err := c.Read(context.Background(), &m); err != nil {
				readErr <- err
				return
			}
			if m.ID != 0 {
				events <- fmt.Sprintf("a reply reached chromedp: %d", m.ID)
				continue
			}
			events <- string(m.Method)
		}
	}()
	ctx := context.Background()
	var raw rawText
	if err := c.Call(ctx, "S1", "Echo", map[string]any{"nodes": []int{1, 2}}, &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw.b) != `{"nodes":[1,2]}` {
		t.Errorf("raw result %s", raw.b)
	}
	var decoded struct {
		Nodes []int `json:"nodes"`
	}
	if err := c.Call(ctx, "", "Echo", map[string]any{"nodes": []int{3}}, &decoded); err != nil || len(decoded.Nodes) != 1 || decoded.Nodes[0] != 3 {
		t.Errorf("decoded result %v, %v", decoded, err)
	}
	var cerr *cdproto.Error
	if err := c.Call(ctx, "S1", "Fail", nil, nil); !errors.As(err, &cerr) || cerr.Message != "it failed" {
		t.Errorf("an error reply: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := c.Call(short, "S1", "Never", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call never answered: %v", err)
	}
	for range 4 {
		if ev := <-events; ev != "Page.loadEventFired" {
			t.Errorf("chromedp read %q", ev)
		}
	}
	// The connection ends while a call waits: the call fails.
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, "S1", "Never", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	in.Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "connection ended") {
		t.Errorf("a call when the connection ends: %v", err)
	}
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Errorf("Read: %v", err)
	}
	if err := c.Call(ctx, "S1", "Echo", nil, nil); err == nil {
		t.Error("a call after the connection ended")
	}
}
