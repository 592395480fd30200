package cdppipe

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
)

// msgOf is the message the browser would send for the JSON message j.
func msgOf(t testing.TB, j string) []byte {
	t.Helper()
	b, err := cdpcbor.AppendCBOR(nil, []byte(j))
	if err != nil {
		t.Fatalf("%s: %v", j, err)
	}
	return b
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		msg                     string
		id                      int64
		method, session         string
		params, result, errText string
	}{
		{msg: `{"id":7,"result":{}}`, id: 7, result: `{}`},
		{msg: `{"id":12,"result":{"nodes":[{"a":"}\"","b":-1.5,"c":[true,false,null]}]},"sessionId":"8A1B"}`, id: 12, session: "8A1B", result: `{"nodes":[{"a":"}\"","b":-1.5,"c":[true,false,null]}]}`},
		{msg: `{"id":3,"result":{"targetId":"T","sessionId":"S1"},"sessionId":"S2"}`, id: 3, session: "S2", result: `{"targetId":"T","sessionId":"S1"}`},
		{msg: `{"id":3,"error":{"code":-32000,"message":"no"}}`, id: 3, errText: "no (-32000)"},
		{msg: `{"method":"Page.loadEventFired","params":{"timestamp":1.25},"sessionId":"S"}`, method: "Page.loadEventFired", session: "S", params: `{"timestamp":1.25}`},
		{msg: `{"other":[1,{"x":2}],"id":4,"result":{"big":4294967296}}`, id: 4, result: `{"big":4294967296}`},
	} {
		var m cdproto.Message
		if err := decode(msgOf(t, tc.msg), &m); err != nil {
			t.Errorf("%s: %v", tc.msg, err)
			continue
		}
		errText := ""
		if m.Error != nil {
			errText = m.Error.Error()
		}
		if m.ID != tc.id || string(m.Method) != tc.method || string(m.SessionID) != tc.session ||
			string(m.Params) != tc.params || string(m.Result) != tc.result || errText != tc.errText {
			t.Errorf("%s: read as id %d method %q session %q params %s result %s error %q", tc.msg, m.ID, m.Method, m.SessionID, m.Params, m.Result, errText)
		}
	}
	good := msgOf(t, `{"id":1,"result":{}}`)
	for name, b := range map[string][]byte{
		"empty":              nil,
		"not an envelope":    []byte(`{"id":1}`),
		"a longer envelope":  append(slices.Clone(good), 0),
		"a shorter envelope": good[:len(good)-1],
		"an array":           msgOf(t, `[1]`),
		"a negative id":      msgOf(t, `{"id":-1}`),
		"an id of text":      msgOf(t, `{"id":"1"}`),
		"a method number":    msgOf(t, `{"method":1}`),
		"an error of text":   msgOf(t, `{"id":1,"error":"no"}`),
	} {
		var m cdproto.Message
		if err := decode(b, &m); !errors.Is(err, cdpcbor.ErrMalformed) {
			t.Errorf("%s: %v, want %v", name, err, cdpcbor.ErrMalformed)
		}
	}
}

// FuzzDecode checks that any message is read without a panic, into JSON
// that is valid; and that a JSON message the browser could send reads as
// the JSON package reads it.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":7,"result":{}}`,
		`{"id":12,"result":{"a":[1,"}",2.5]},"sessionId":"8A1B"}`,
		`{"method":"Target.attachedToTarget","params":{"sessionId":"S","targetInfo":{"targetId":"T"}}}`,
		`{"id":3,"error":{"code":1,"message":"m"},"sessionId":"S"}`,
	} {
		if b, err := cdpcbor.AppendCBOR(nil, []byte(s)); err == nil {
			f.Add(b)
		}
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m cdproto.Message
		if err := decode(b, &m); err == nil {
			for _, v := range [][]byte{m.Params, m.Result} {
				if v != nil && !jsonv2.Value(v).IsValid() {
					t.Errorf("% x: read as JSON that is not valid: %s", b, v)
				}
			}
		}
		// As JSON, through the browser's binary form.
		var want cdproto.Message
		if jsonv2.Unmarshal(b, &want, chromedp.DefaultUnmarshalOptions) != nil {
			return
		}
		c, err := cdpcbor.AppendCBOR(nil, b)
		if err != nil || want.ID < 0 || want.ID > math.MaxInt32 {
			return
		}
		var got cdproto.Message
		if err := decode(c, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if got.ID != want.ID || got.Method != want.Method || got.SessionID != want.SessionID ||
			!sameJSON(got.Params, want.Params) || !sameJSON(got.Result, want.Result) ||
			(got.Error == nil) != (want.Error == nil) || (got.Error != nil && *got.Error != *want.Error) {
			t.Errorf("%s: read as %+v, want %+v", b, got, want)
		}
	})
}

// sameJSON reports whether a and b hold the same values.
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	if jsonv2.Unmarshal(a, &va) != nil || jsonv2.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
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
	data := strings.Repeat("x", 3*readBuffer)
	long := msgOf(t, `{"id":2,"result":{"data":"`+data+`"},"sessionId":"AB"}`)
	go func() {
		in.Write(msgOf(t, `{"method":"Page.frameNavigated","params":{}}`)) // an event
		for i := 0; i < len(long); i += 4096 {                             // a long reply, in pieces
			in.Write(long[i:min(len(long), i+4096)])
		}
		in.Write(msgOf(t, `{"id":3,"error":{"code":-32601,"message":"no such method"}}`))
		cut := msgOf(t, `{"id":4,"result":{}}`)
		in.Write(cut[:len(cut)-2]) // cut off
		in.Close()
	}()
	ctx := context.Background()
	var m cdproto.Message
	if err := c.Read(ctx, &m); err != nil || m.Method != "Page.frameNavigated" || m.ID != 0 || string(m.Params) != "{}" {
		t.Fatalf("event: %+v, %v", m, err)
	}
	if err := c.Read(ctx, &m); err != nil || m.ID != 2 || m.SessionID != "AB" || m.Method != "" || string(m.Result) != `{"data":"`+data+`"}` {
		t.Fatalf("long reply: id %d session %q result of %d bytes, %v", m.ID, m.SessionID, len(m.Result), err)
	}
	if err := c.Read(ctx, &m); err != nil || m.ID != 3 || m.Error == nil || m.Error.Code != -32601 || m.Result != nil {
		t.Fatalf("error reply: %+v, %v", m, err)
	}
	if err := c.Read(ctx, &m); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a message cut off: %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

func TestConnReadsNoEnvelope(t *testing.T) {
	c, in, _ := pipeConn(t)
	go func() {
		io.WriteString(in, `{"id":1,"result":{}}`+"\x00") // JSON: a browser in the other mode
		in.Close()
	}()
	var m cdproto.Message
	if err := c.Read(context.Background(), &m); !errors.Is(err, cdpcbor.ErrMalformed) {
		t.Fatalf("JSON read as %+v, %v; want %v", m, err, cdpcbor.ErrMalformed)
	}
}

// TestConnKeepsResults checks that a result stays as it was after later
// reads: the caller decodes it while the next message comes in.
func TestConnKeepsResults(t *testing.T) {
	c, in, _ := pipeConn(t)
	go func() {
		for _, s := range []string{`{"id":1,"result":{"v":"first"}}`, `{"id":2,"result":{"v":"other"}}`} {
			in.Write(msgOf(t, s))
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
	if want := msgOf(t, `{"id":5,"sessionId":"S","method":"Page.navigate","params":{"url":"about:blank"}}`); !bytes.Equal(got, want) {
		t.Errorf("wrote % x, want % x", got, want)
	}
	for _, id := range []int64{-1, math.MaxInt32 + 1} {
		if err := c.Write(context.Background(), &cdproto.Message{ID: id, Method: "M"}); err == nil {
			t.Errorf("id %d written", id)
		}
	}
}

// rawCBOR is a CBORResult that keeps the bytes it is given.
type rawCBOR struct{ b []byte }

func (r *rawCBOR) DecodeCBOR(b []byte) error { r.b = b; return nil }

// fakeBrowser answers the commands written to the Conn: a command's
// params are echoed as its result, unless its method is "Fail".
func fakeBrowser(t *testing.T, in io.Writer, out io.Reader) {
	go func() {
		for {
			h := make([]byte, cdpcbor.EnvelopeSize)
			if _, err := io.ReadFull(out, h); err != nil {
				return
			}
			n, ok := cdpcbor.EnvelopeLength(h)
			if !ok {
				t.Errorf("a command starts % x", h)
				return
			}
			b := append(h, make([]byte, n)...)
			if _, err := io.ReadFull(out, b[len(h):]); err != nil {
				return
			}
			j, err := cdpcbor.AppendJSON(nil, b)
			if err != nil {
				t.Errorf("a command: %v", err)
				return
			}
			var m struct {
				ID        int64           `json:"id"`
				SessionID string          `json:"sessionId"`
				Method    string          `json:"method"`
				Params    json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(j, &m); err != nil {
				t.Errorf("a command: %s: %v", j, err)
				return
			}
			// An event comes first, for chromedp's reader.
			in.Write(msgOf(t, `{"method":"Page.loadEventFired","params":{"timestamp":1}}`))
			var reply string
			switch m.Method {
			case "Fail":
				reply = fmt.Sprintf(`{"id":%d,"error":{"code":-32000,"message":"it failed"}}`, m.ID)
			case "Never":
				continue
			default:
				reply = fmt.Sprintf(`{"id":%d,"result":%s,"sessionId":%q}`, m.ID, cmp.Or(string(m.Params), "{}"), m.SessionID)
			}
			in.Write(msgOf(t, reply))
		}
	}()
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
	var raw rawCBOR
	if err := c.Call(ctx, "S1", "Echo", map[string]any{"nodes": []int{1, 2}}, &raw); err != nil {
		t.Fatal(err)
	}
	if j, err := cdpcbor.AppendJSON(nil, raw.b); err != nil || string(j) != `{"nodes":[1,2]}` {
		t.Errorf("raw result % x: %s, %v", raw.b, j, err)
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
