package pagetree

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/proctor-eval/proctor/internal/cdpcbor"
	"github.com/proctor-eval/proctor/internal/cdppipe"
)

// refTree is the AX reply as the JSON package decodes it into structs:
// the reference the decoders are checked against, and the plain
// alternative it is measured against.
type refTree struct {
	Nodes []*refNode `json:"nodes"`
}

type refNode struct {
	NodeID           string    `json:"nodeId"`
	Ignored          bool      `json:"ignored"`
	Role             *refValue `json:"role"`
	Name             *refValue `json:"name"`
	Value            *refValue `json:"value"`
	Properties       []refProp `json:"properties"`
	ParentID         string    `json:"parentId"`
	ChildIDs         []string  `json:"childIds"`
	BackendDOMNodeID int64     `json:"backendDOMNodeId"`
}

type refValue struct {
	Value jsonv2.Value `json:"value"`
}

type refProp struct {
	Name  string    `json:"name"`
	Value *refValue `json:"value"`
}

// text is the value as axValue.text reads it: a string, a number written
// out, true or false; "" for anything else.
func (v *refValue) text() string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) == nil {
		return s
	}
	switch t := string(v.Value); t {
	case "true", "false":
		return t
	}
	var f float64
	if json.Unmarshal(v.Value, &f) == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return ""
}

// str is the value when it is a string.
func (v *refValue) str() string {
	var s string
	if v == nil || json.Unmarshal(v.Value, &s) != nil {
		return ""
	}
	return s
}

// describe writes an AX tree out the same way from either decoding.
func describeAX(t *axTree) []string {
	var out []string
	for _, n := range t.Nodes {
		props := ""
		for _, p := range n.Properties {
			props += fmt.Sprintf(" %s=%q/%v", p.Name, p.Value.text(), p.Value.isTrue())
		}
		out = append(out, fmt.Sprintf("%s %v role=%q name=%q value=%q parent=%s kids=%v dom=%d%s",
			n.NodeID, n.Ignored, n.Role.str(), n.Name.str(), n.Value.text(), n.ParentID, n.ChildIDs, n.BackendDOMNodeID, props))
	}
	return out
}

func describeRef(t *refTree) []string {
	var out []string
	for _, n := range t.Nodes {
		if n == nil {
			n = &refNode{}
		}
		props := ""
		for _, p := range n.Properties {
			props += fmt.Sprintf(" %s=%q/%v", p.Name, p.Value.text(), p.Value.str() == "true" || (p.Value != nil && string(p.Value.Value) == "true"))
		}
		kids := make([]accessibility.NodeID, len(n.ChildIDs))
		for i, k := range n.ChildIDs {
			kids[i] = accessibility.NodeID(k)
		}
		out = append(out, fmt.Sprintf("%s %v role=%q name=%q value=%q parent=%s kids=%v dom=%d%s",
			n.NodeID, n.Ignored, n.Role.str(), n.Name.str(), n.Value.text(), n.ParentID, kids, n.BackendDOMNodeID, props))
	}
	return out
}

// agree decodes b, JSON: where the JSON package reads it into structs,
// DecodeCBOR must read its CBOR (as the browser would send it), and
// UnmarshalJSON b itself, to the same nodes.
func agree(t *testing.T, b []byte) {
	t.Helper()
	var ref refTree
	if jsonv2.Unmarshal(b, &ref, chromedp.DefaultUnmarshalOptions) != nil {
		return
	}
	want := describeRef(&ref)
	var got axTree
	c, err := cdpcbor.AppendCBOR(nil, b)
	if err != nil {
		// Duplicate keys, which the JSON package allows here and the
		// browser never sends.
		if got.UnmarshalJSON(b) == nil {
			t.Fatalf("UnmarshalJSON(%.200s) read what does not convert: %v", b, err)
		}
		return
	}
	agreeCBOR(t, c, want)
	if err := got.UnmarshalJSON(b); err != nil {
		t.Fatalf("UnmarshalJSON(%.200s): %v, but the JSON package reads it", b, err)
	}
	if got := describeAX(&got); !slices.Equal(got, want) {
		t.Fatalf("UnmarshalJSON(%.200s) =\n%v\nthe JSON package:\n%v", b, got, want)
	}
}

// agreeCBOR checks that DecodeCBOR reads c as the nodes want describes.
func agreeCBOR(t *testing.T, c []byte, want []string) {
	t.Helper()
	var got axTree
	if err := got.DecodeCBOR(c); err != nil {
		t.Fatalf("DecodeCBOR(% .200x): %v, but the JSON package reads its JSON", c, err)
	}
	if got := describeAX(&got); !slices.Equal(got, want) {
		t.Fatalf("DecodeCBOR(% .200x) =\n%v\nthe JSON package:\n%v", c, got, want)
	}
}

func FuzzDecodeAX(f *testing.F) {
	for _, s := range []string{
		`{"nodes":[{"nodeId":"1","ignored":false,"role":{"type":"internalRole","value":"RootWebArea"},"name":{"type":"computedString","value":"T \"q\" \u00e9","sources":[{"type":"contents"}]},"childIds":["2"],"backendDOMNodeId":7,"frameId":"F"}]}`,
		`{"nodes":[{"nodeId":"2","ignored":true,"ignoredReasons":[{"name":"uninteresting","value":{"type":"boolean","value":true}}],"parentId":"1","childIds":[]}]}`,
		`{"nodes":[{"nodeId":"3","role":{"type":"role","value":"slider"},"value":{"type":"number","value":2.50},"properties":[{"name":"focusable","value":{"type":"booleanOrUndefined","value":true}},{"name":"checked","value":{"type":"tristate","value":"mixed"}}]}]}`,
		`{"nodes":null}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			return // the browser writes UTF-8; the JSON package mends what is not
		}
		agree(t, b)
	})
}

// cborOf is a cdppipe.CBORResult that keeps the reply.
type cborOf []byte

func (c *cborOf) DecodeCBOR(b []byte) error { *c = b; return nil }

// rawAX reads the page's AX reply as the browser sends it (CBOR), and as
// JSON.
func rawAX(tb testing.TB, html string) (cbor, json []byte) {
	tb.Helper()
	ctx := browser(tb)
	srv := serve(tb, map[string]string{"/": html})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		tb.Fatal(err)
	}
	raw, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (cborOf, error) {
		var v cborOf
		err := cdppipe.ConnOf(ctx).Call(ctx, t.SessionID, accessibility.CommandGetFullAXTree, accessibility.GetFullAXTreeParams{}, &v)
		return v, err
	})
	if err != nil {
		tb.Fatal(err)
	}
	j, err := cdpcbor.AppendJSON(nil, raw)
	if err != nil {
		tb.Fatal(err)
	}
	return raw, j
}

// TestDecodeAXAgrees checks UnmarshalJSON and DecodeCBOR against the JSON
// package on real replies: the benchmark's page and the form of TestForm.
func TestDecodeAXAgrees(t *testing.T) {
	page, err := os.ReadFile("../../bench/playwright/page2000.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, html := range []string{string(page), formPage} {
		c, b := rawAX(t, html)
		var ref refTree
		if err := jsonv2.Unmarshal(b, &ref, chromedp.DefaultUnmarshalOptions); err != nil || len(ref.Nodes) < 10 {
			t.Fatalf("the JSON package: %d nodes, %v", len(ref.Nodes), err)
		}
		agree(t, b)
		agreeCBOR(t, c, describeRef(&ref))
	}
}

// BenchmarkDecodeAX decodes the AX reply of the page of about 2,000
// elements: as the browser sends it (1.7 MB of CBOR) with DecodeCBOR; as
// and, the plain alternative, as JSON (1.8 MB) with the JSON package into
// structs.
func BenchmarkDecodeAX(b *testing.B) {
	page, err := os.ReadFile("../../bench/playwright/page2000.html")
	if err != nil {
		b.Fatal(err)
	}
	c, raw := rawAX(b, string(page))
	b.Run("cbor", func(b *testing.B) {
		b.SetBytes(int64(len(c)))
		for b.Loop() {
			var t axTree
			if err := t.DecodeCBOR(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-package", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var t refTree
			if err := jsonv2.Unmarshal(raw, &t, chromedp.DefaultUnmarshalOptions); err != nil {
				b.Fatal(err)
			}
		}
	})
}
