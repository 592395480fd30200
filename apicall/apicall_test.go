package apicall

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/query"
)

// xmlServer answers XML-RPC calls as PyMOL's server does: count_atoms
// with a number, get_names with a list, get_view with doubles,
// get_session with a struct, get_none with nil (allow_none) and anything
// else with a fault. It records the last call's body.
func xmlServer(t *testing.T, last *string) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		*last = string(b)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "text/xml" {
			http.Error(w, "not an XML-RPC call", http.StatusBadRequest)
			return
		}
		var val string
		switch {
		case strings.Contains(*last, "<methodName>count_atoms</methodName>"):
			val = `<int>107</int>`
		case strings.Contains(*last, "<methodName>get_names</methodName>"):
			val = `<array><data><value><string>pept</string></value><value>1tii</value></data></array>`
		case strings.Contains(*last, "<methodName>get_view</methodName>"):
			val = `<array><data><value><double>1.0</double></value><value><double>-63.19</double></value></data></array>`
		case strings.Contains(*last, "<methodName>get_session</methodName>"):
			val = `<struct><member><name>ok</name><value><boolean>1</boolean></value></member><member><name>when</name><value><dateTime.iso8601>20261126T08:00:00</dateTime.iso8601></value></member></struct>`
		case strings.Contains(*last, "<methodName>get_none</methodName>"):
			val = `<nil/>`
		default:
			io.WriteString(w, `<?xml version="1.0"?><methodResponse><fault><value><struct>`+
				`<member><name>faultCode</name><value><int>1</int></value></member>`+
				`<member><name>faultString</name><value><string>&lt;class 'Exception'&gt;:method "nosuch" is not supported</string></value></member>`+
				`</struct></value></fault></methodResponse>`)
			return
		}
		io.WriteString(w, `<?xml version="1.0"?><methodResponse><params><param><value>`+val+`</value></param></params></methodResponse>`)
	}))
}

func TestDoXMLRPC(t *testing.T) {
	var last string
	srv := xmlServer(t, &last)
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		q        query.XMLRPC
		want     string
		found    bool
		wantCall string // a fragment of the methodCall sent
	}{
		{name: "an int", q: query.XMLRPC{Method: "count_atoms", Params: []any{"chain A and color red"}},
			want: "107", found: true, wantCall: "<value><string>chain A and color red</string></value>"},
		{name: "a whole number is sent as int", q: query.XMLRPC{Method: "count_atoms", Params: []any{"all", float64(1)}},
			want: "107", found: true, wantCall: "<value><int>1</int></value>"},
		{name: "a fraction is sent as double", q: query.XMLRPC{Method: "count_atoms", Params: []any{2.5, true}},
			want: "107", found: true, wantCall: "<value><double>2.5</double></value></param><param><value><boolean>1</boolean></value>"},
		{name: "a list, with an untyped string", q: query.XMLRPC{Method: "get_names"}, want: `["pept","1tii"]`, found: true},
		{name: "doubles", q: query.XMLRPC{Method: "get_view"}, want: `[1,-63.19]`, found: true},
		{name: "a struct and a date", q: query.XMLRPC{Method: "get_session"}, want: `{"ok":true,"when":"2026-11-26T08:00:00Z"}`, found: true},
		{name: "nil", q: query.XMLRPC{Method: "get_none"}, want: `null`, found: true},
		{name: "a fault is an answer, not found", q: query.XMLRPC{Method: "nosuch"},
			want: `fault 1: <class 'Exception'>:method "nosuch" is not supported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := Do(context.Background(), http.DefaultTransport, srv.URL, query.Service{XMLRPC: &tc.q})
			if err != nil || got != tc.want || found != tc.found {
				t.Fatalf("got %s found %v err %v, want %s found %v", got, found, err, tc.want, tc.found)
			}
			if !strings.Contains(last, "<methodName>"+tc.q.Method+"</methodName>") || !strings.Contains(last, tc.wantCall) {
				t.Fatalf("the call sent: %s", last)
			}
		})
	}
}

func TestDoErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("x", MaxBody+1))
		case "/html":
			io.WriteString(w, "<html>not xml-rpc</html>")
		case "/moved":
			http.Redirect(w, r, "/none", http.StatusFound)
		case "/broken":
			io.WriteString(w, "<methodResponse><params><param><value><int>seven</int></value></param></params></methodResponse>")
		default:
			http.Error(w, "gone", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name  string
		q     query.Service
		want  string // the value, when no error
		found bool
		err   string
	}{
		{name: "http 404 is an answer, not found", q: query.Service{HTTP: &query.HTTP{Port: 1, Path: "/none"}}, want: "gone\n"},
		{name: "a redirect is followed", q: query.Service{HTTP: &query.HTTP{Port: 1, Path: "/moved"}}, want: "gone\n"},
		{name: "xml-rpc 404 is an answer, not found", q: query.Service{XMLRPC: &query.XMLRPC{Port: 1, Path: "/none", Method: "m"}}, want: "gone\n"},
		{name: "not a methodResponse", q: query.Service{XMLRPC: &query.XMLRPC{Port: 1, Path: "/html", Method: "m"}}, err: "not an XML-RPC methodResponse"},
		{name: "a value that does not decode", q: query.Service{XMLRPC: &query.XMLRPC{Port: 1, Path: "/broken", Method: "m"}}, err: "does not decode"},
		{name: "too big", q: query.Service{HTTP: &query.HTTP{Port: 1, Path: "/big"}}, err: "over 16 MiB"},
		{name: "not a call", q: query.Service{SQL: &query.SQL{Service: "s", DB: "d", Query: "select 1"}}, err: "not an API call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := Do(context.Background(), http.DefaultTransport, srv.URL, tc.q)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || found != tc.found {
				t.Fatalf("got %q found %v err %v, want %q found %v", got, found, err, tc.want, tc.found)
			}
		})
	}
	q := query.Service{HTTP: &query.HTTP{Port: 1, Path: "/"}}
	if _, _, err := Do(context.Background(), http.DefaultTransport, "http://127.0.0.1:1", q); err == nil || !strings.Contains(err.Error(), "GET / of the loopback's port 1") {
		t.Fatalf("nothing listening: %v", err)
	}
}

// FuzzResult: whatever a server answers, decoding gives a value, a fault
// or an error, never a panic; a found value is JSON.
func FuzzResult(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0"?><methodResponse><params><param><value><int>107</int></value></param></params></methodResponse>`,
		`<methodResponse><params><param><value><array><data><value>a</value><value><double>1e3</double></value></data></array></value></param></params></methodResponse>`,
		`<methodResponse><params><param><value><struct><member><name>k</name><value><base64>aGk=</base64></value></member></struct></value></param></params></methodResponse>`,
		`<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>4</int></value></member><member><name>faultString</name><value>x</value></member></struct></value></fault></methodResponse>`,
		`<methodResponse><params><param><value><double>nan</double></value></param></params></methodResponse>`,
		`<methodResponse><params><param><value><nil/></value></param></params></methodResponse>`,
		`<methodResponse>`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, found, err := Result(b)
		if err == nil && found && !jsonValid(v) {
			t.Fatalf("a found value that is not JSON: %q", v)
		}
	})
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
