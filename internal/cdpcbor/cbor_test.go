package cdpcbor

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// h is the bytes of a hex string, spaces allowed.
func h(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestAppendJSON(t *testing.T) {
	for _, tc := range []struct{ cbor, json string }{
		{"00", "0"},
		{"17", "23"},
		{"18 18", "24"},
		{"19 0100", "256"},
		{"1a 00010000", "65536"},
		{"1b 0000000100000000", "4294967296"},
		{"20", "-1"},
		{"39 03e7", "-1000"},
		{"f4", "false"},
		{"f5", "true"},
		{"f6", "null"},
		{"f7", "null"},                   // undefined
		{"fb 3ff8000000000000", "1.5"},   // double
		{"fb 444b1ae4d6e2ef50", "1e+21"}, // as JavaScript writes it
		{"fb 3eb0c6f7a0b5ed8d", "0.000001"},
		{"fb 3e7ad7f29abcaf48", "1e-07"},
		{"fb 7ff8000000000000", "null"}, // NaN
		{"fa 3fc00000", "1.5"},          // float
		{"63 612262", `"a\"b"`},
		{"65 5c0a01097f", `"\\\n\u0001\t` + "\x7f" + `"`},
		{"62 c3a9", `"é"`},
		{"62 ff61", `"\ufffda"`}, // not UTF-8
		// UTF-16: é, an emoji (a surrogate pair), an unpaired surrogate, a quote
		{"48 e900 3dd8 00de 00d8", `"é😀` + "\uFFFD" + `"`},
		{"44 2200 0a00", `"\"\n"`},
		{"d6 43 010203", `"AQID"`}, // binary: base64
		{"9f 01 02 ff", "[1,2]"},
		{"82 01 9f ff", "[1,[]]"},
		{"bf 61 61 01 61 62 f6 ff", `{"a":1,"b":null}`},
		{"a1 42 6100 80", `{"a":[]}`}, // a UTF-16 key
		// an envelope holding a map
		{"d8 18 5a 00000005 bf 61 61 01 ff", `{"a":1}`},
		{"d8 18 45 bf 61 61 01 ff", `{"a":1}`},
	} {
		got, err := AppendJSON(nil, h(tc.cbor))
		if err != nil || string(got) != tc.json {
			t.Errorf("%s: %s, %v; want %s", tc.cbor, got, err, tc.json)
		}
		if err == nil && !jsonv2.Value(got).IsValid() {
			t.Errorf("%s: %s is not valid JSON", tc.cbor, got)
		}
	}
}

func TestAppendJSONErrors(t *testing.T) {
	deep := strings.Repeat("81", maxDepth+1) + "00"
	for _, c := range []string{
		"",
		"18",                  // cut off
		"63 6161",             // a string cut off
		"7a ffffffff 61",      // a length past the end
		"9f 01",               // no break
		"ff",                  // a break alone
		"1c",                  // a reserved length
		"5f ff",               // an indefinite byte string
		"43 610062",           // UTF-16 of an odd length
		"c1 00",               // another tag
		"d8 18 01",            // an envelope on an integer
		"d8 18 42 0101",       // an envelope of two items
		"a1 01 02",            // a map key that is not a string
		"f0",                  // an unused simple value
		"9b ffffffffffffffff", // more items than bytes
		"3b ffffffffffffffff", // a negative integer out of range
		"00 00",               // bytes after the item
		deep,
	} {
		if got, err := AppendJSON(nil, h(c)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%.40s: %s, %v; want %v", c, got, err, ErrMalformed)
		}
	}
}

func TestAppendCBOR(t *testing.T) {
	for _, tc := range []struct{ json, cbor string }{
		{`{"a":1}`, "d8 18 5a 00000005 bf 61 61 01 ff"},
		{`{"id":5,"params":{}}`, "d8 18 5a 00000016 bf 62 6964 05 66 706172616d73 d8 18 5a 00000002 bf ff ff"},
		{`[-5, 1.5, 2147483647, 2147483648, true, false, null, "é"]`,
			"9f 24 fb 3ff8000000000000 1a 7fffffff fb 41e0000000000000 f5 f4 f6 62 c3a9 ff"},
		{`"a\"b"`, "63 612262"},
	} {
		got, err := AppendCBOR(nil, []byte(tc.json))
		if err != nil || !reflect.DeepEqual(got, h(tc.cbor)) {
			t.Errorf("%s: % x, %v; want %s", tc.json, got, err, tc.cbor)
		}
	}
	for _, j := range []string{`{"a":`, `{"a" 1}`, `[1,]`, `{"a":1,"a":2}`} {
		if got, err := AppendCBOR(nil, []byte(j)); err == nil {
			t.Errorf("%s: % x, want an error", j, got)
		}
	}
}

// FuzzAppendJSON checks that any input converts without a panic, to valid
// JSON when it converts.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{"d8185a00000005bf616101ff", "9f0102ff", "48e9003dd800de00d8", "d643010203", "fb3ff8000000000000"} {
		f.Add(h(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := AppendJSON(nil, b)
		if err == nil && !jsonv2.Value(got).IsValid() {
			t.Errorf("% x: %s is not valid JSON", b, got)
		}
		// The decoder passes over what converts, and over nothing else.
		d := NewDecoder(b)
		if serr := d.Skip(); (serr == nil && d.End() == nil) && err != nil {
			t.Errorf("% x: skipped whole, but does not convert: %v", b, err)
		}
	})
}

// FuzzRoundTrip checks that JSON converted to CBOR converts back to the
// same values.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{`{"id":1,"method":"M","params":{"a":[1,-2,2.5,"x\"é",true,null]}}`, `[]`, `"\u2028"`, `1e300`, `-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, j []byte) {
		var want any
		if jsonv2.Unmarshal(j, &want) != nil {
			return
		}
		c, err := AppendCBOR(nil, j)
		if err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		back, err := AppendJSON(nil, c)
		if err != nil {
			t.Fatalf("%s: % x: %v", j, c, err)
		}
		var got any
		if err := jsonv2.Unmarshal(back, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: back as %s (%v)", j, back, err)
		}
	})
}
