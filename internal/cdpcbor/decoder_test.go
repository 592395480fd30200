package cdpcbor

import (
	"errors"
	"testing"
)

// TestDecoder reads a message with values of every kind, in and out of
// envelopes, leaving some fields to be skipped.
func TestDecoder(t *testing.T) {
	b, err := AppendCBOR(nil, []byte(`{"skipped":{"deep":[1,{"x":[]}]},"n":-7,"whole":3.0,"half":2.5,"s":"é","ok":true,"nil":null,"list":[1,"two"]}`))
	if err != nil {
		t.Fatal(err)
	}
	// A UTF-16 string and binary data, which JSON cannot give.
	b = b[:len(b)-1]
	b = append(AppendText(b, "u16"), h("44 e900 6200")...)
	b = append(AppendText(b, "bin"), h("d6 42 0102")...)
	b = append(b, cborBreak)
	d := NewDecoder(b[EnvelopeSize:]) // the map itself
	kinds := map[string]Kind{}
	var list []string
	err = d.Map(func(k []byte) error {
		key := string(k)
		kinds[key] = d.Kind()
		var err error
		switch key {
		case "n":
			var n int64
			if n, err = d.Int(); n != -7 {
				t.Errorf("n = %d", n)
			}
		case "whole":
			var n int64
			if n, err = d.Int(); n != 3 {
				t.Errorf("whole = %d", n)
			}
		case "half":
			if _, err := d.Int(); err == nil {
				t.Error("2.5 read as an integer")
			}
			var f float64
			if f, err = d.Float(); f != 2.5 {
				t.Errorf("half = %v", f)
			}
		case "s", "u16":
			var s string
			if s, err = d.String(); s != map[string]string{"s": "é", "u16": "éb"}[key] {
				t.Errorf("%s = %q", key, s)
			}
		case "ok":
			var v bool
			if v, err = d.Bool(); !v {
				t.Error("ok is false")
			}
		case "nil":
			if !d.Null() {
				t.Error("nil is not null")
			}
		case "list":
			err = d.Array(func() error {
				if d.Kind() == Int {
					return nil // skipped
				}
				s, err := d.String()
				list = append(list, s)
				return err
			})
		case "bin":
			var j []byte
			if j, err = d.AppendJSON(nil); string(j) != `"AQI="` {
				t.Errorf("bin = %s", j)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	want := map[string]Kind{"skipped": Map, "n": Int, "whole": Float, "half": Float, "s": String, "ok": Bool, "nil": Null, "list": Array, "u16": String, "bin": Binary}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("kind of %s: %d, want %d", k, kinds[k], v)
		}
	}
	if len(list) != 1 || list[0] != "two" {
		t.Errorf("list read as %q", list)
	}
}

func TestDecoderErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		cbor string
		read func(d *Decoder) error
	}{
		"a string as an integer": {"61 61", func(d *Decoder) error { _, err := d.Int(); return err }},
		"an integer as a string": {"01", func(d *Decoder) error { _, err := d.String(); return err }},
		"a map as an array":      {"bf ff", func(d *Decoder) error { return d.Array(func() error { return nil }) }},
		"an array as a map":      {"9f ff", func(d *Decoder) error { return d.Map(func([]byte) error { return nil }) }},
		"a number as a boolean":  {"01", func(d *Decoder) error { _, err := d.Bool(); return err }},
		"a map cut off":          {"bf 61 61", func(d *Decoder) error { return d.Map(func([]byte) error { return nil }) }},
		"a key of a number":      {"bf 01 01 ff", func(d *Decoder) error { return d.Map(func([]byte) error { return nil }) }},
		"an envelope of two":     {"d8 18 43 bf ff 01", func(d *Decoder) error { return d.Map(func([]byte) error { return nil }) }},
		"something after":        {"01 02", func(d *Decoder) error { d.Int(); return d.End() }},
		"a value cut off":        {"bf 61 61 63 61 ff", func(d *Decoder) error { return d.Map(func([]byte) error { return nil }) }},
	} {
		if err := tc.read(NewDecoder(h(tc.cbor))); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want %v", name, err, ErrMalformed)
		}
	}
	// The error fn returns ends the read.
	stop := errors.New("stop")
	if err := NewDecoder(h("9f 01 02 ff")).Array(func() error { return stop }); err != stop {
		t.Errorf("fn's error: %v", err)
	}
}
