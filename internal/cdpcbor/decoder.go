package cdpcbor

import (
	"math"
	"unicode/utf8"
)

// A Decoder reads the values of a CBOR item in place, in order: a decoder
// for a large reply reads the fields it needs and skips the rest, with no
// JSON in between. Strings are returned as UTF-8 whichever way the browser
// sent them.
type Decoder struct {
	b     []byte
	i     int
	depth int
	key   []byte // a UTF-16 key, as UTF-8
}

// NewDecoder returns a decoder of the item b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Kind is the type of a value.
type Kind byte

// The kinds of values.
const (
	Invalid Kind = iota // malformed, or nothing left
	Null                // null or undefined
	Bool
	Int
	Float
	String
	Binary
	Array
	Map
)

// Kind reports the kind of the next value, looking through an envelope.
func (d *Decoder) Kind() Kind {
	i := d.i
	if i < len(d.b) && d.b[i] == majorTag<<5|24 && i+1 < len(d.b) && d.b[i+1] == tagEnvelope {
		_, _, start, _, err := head(d.b, i+2)
		if err != nil {
			return Invalid
		}
		i = start
	}
	if i >= len(d.b) {
		return Invalid
	}
	switch c := d.b[i]; c >> 5 {
	case majorUnsigned, majorNegative:
		return Int
	case majorText, majorBytes:
		return String
	case majorArray:
		return Array
	case majorMap:
		return Map
	case majorTag:
		if c == majorTag<<5|tagBase64 {
			return Binary
		}
		return Invalid
	default:
		switch c {
		case cborFalse, cborTrue:
			return Bool
		case cborNull, cborUndefined:
			return Null
		case cborFloat32, cborFloat64:
			return Float
		}
	}
	return Invalid
}

// Null consumes the next value and reports true if it is null (or
// undefined); otherwise it consumes nothing.
func (d *Decoder) Null() bool {
	if d.i < len(d.b) && (d.b[d.i] == cborNull || d.b[d.i] == cborUndefined) {
		d.i++
		return true
	}
	return false
}

// Bool reads a boolean.
func (d *Decoder) Bool() (bool, error) {
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case cborTrue:
			d.i++
			return true, nil
		case cborFalse:
			d.i++
			return false, nil
		}
	}
	return false, d.wrong("a boolean")
}

// Int reads an integer, or a double that holds one.
func (d *Decoder) Int() (int64, error) {
	major, arg, next, _, err := head(d.b, d.i)
	if err != nil {
		return 0, err
	}
	switch {
	case major == majorUnsigned && arg <= math.MaxInt64:
		d.i = next
		return int64(arg), nil
	case major == majorNegative && arg <= math.MaxInt64:
		d.i = next
		return -1 - int64(arg), nil
	case d.b[d.i] == cborFloat64 || d.b[d.i] == cborFloat32:
		f := d.float(arg)
		if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
			d.i = next
			return int64(f), nil
		}
	}
	return 0, d.wrong("an integer")
}

// Float reads a number.
func (d *Decoder) Float() (float64, error) {
	major, arg, next, _, err := head(d.b, d.i)
	if err != nil {
		return 0, err
	}
	switch {
	case major == majorUnsigned:
		d.i = next
		return float64(arg), nil
	case major == majorNegative:
		d.i = next
		return -1 - float64(arg), nil
	case d.b[d.i] == cborFloat64 || d.b[d.i] == cborFloat32:
		d.i = next
		return d.float(arg), nil
	}
	return 0, d.wrong("a number")
}

// float is the double or float of the head at d.i, whose argument is arg.
func (d *Decoder) float(arg uint64) float64 {
	if d.b[d.i] == cborFloat32 {
		return float64(math.Float32frombits(uint32(arg)))
	}
	return math.Float64frombits(arg)
}

// String reads a string, UTF-8 or UTF-16, as UTF-8; bytes that are not
// UTF-8 (or an unpaired surrogate) become U+FFFD, as in AppendJSON.
func (d *Decoder) String() (string, error) {
	s, err := d.text()
	return string(s), err
}

// text reads a string as UTF-8 bytes; they alias the item where the
// browser sent UTF-8.
func (d *Decoder) text() ([]byte, error) {
	major, n, start, _, err := head(d.b, d.i)
	if err != nil {
		return nil, err
	}
	if major != majorText && major != majorBytes {
		return nil, d.wrong("a string")
	}
	end, err := span(d.b, start, n)
	if err != nil {
		return nil, err
	}
	s := d.b[start:end]
	if major == majorBytes {
		if n%2 != 0 {
			return nil, cborError(d.i, "UTF-16 text of an odd length")
		}
		s = utf16Text(s)
	} else if !utf8.Valid(s) {
		s = mendUTF8(s)
	}
	d.i = end
	return s, nil
}

// Map reads a map (in an envelope or not), calling fn with each key; fn
// reads the key's value, or leaves it, and it is skipped. The key is valid
// only during the call.
func (d *Decoder) Map(fn func(key []byte) error) error {
	return d.container(majorMap, fn, nil)
}

// Array reads an array, calling fn for each item; fn reads the item, or
// leaves it, and it is skipped.
func (d *Decoder) Array(fn func() error) error {
	return d.container(majorArray, nil, fn)
}

// container reads a map (with onKey) or an array (with onItem).
func (d *Decoder) container(want byte, onKey func([]byte) error, onItem func() error) error {
	end := -1 // where the envelope, if there is one, ends
	if d.i+1 < len(d.b) && d.b[d.i] == majorTag<<5|24 && d.b[d.i+1] == tagEnvelope {
		major, n, start, _, err := head(d.b, d.i+2)
		if err != nil {
			return err
		}
		if major != majorBytes {
			return cborError(d.i, "an envelope that is not a byte string")
		}
		if end, err = span(d.b, start, n); err != nil {
			return err
		}
		d.i = start
	}
	at := d.i
	major, count, next, indef, err := head(d.b, d.i)
	if err != nil {
		return err
	}
	if major != want {
		if want == majorMap {
			return d.wrong("a map")
		}
		return d.wrong("an array")
	}
	if d.depth++; d.depth > maxDepth {
		return cborError(at, "nested deeper than %d", maxDepth)
	}
	defer func() { d.depth-- }()
	d.i = next
	for n := uint64(0); ; n++ {
		if indef {
			if d.i >= len(d.b) {
				return cborError(at, "no break ends the container")
			}
			if d.b[d.i] == cborBreak {
				d.i++
				break
			}
		} else if n == count {
			break
		}
		if onKey != nil {
			if d.i >= len(d.b) || d.b[d.i]>>5 != majorText {
				k, err := d.text()
				if err != nil {
					return cborError(d.i, "a map key that is not a string")
				}
				d.key = append(d.key[:0], k...)
			} else {
				_, n, start, _, err := head(d.b, d.i)
				if err != nil {
					return err
				}
				e, err := span(d.b, start, n)
				if err != nil {
					return err
				}
				d.key, d.i = d.b[start:e:e], e
			}
			before := d.i
			if err := onKey(d.key); err != nil {
				return err
			}
			if d.i == before {
				if err := d.Skip(); err != nil {
					return err
				}
			}
			continue
		}
		before := d.i
		if err := onItem(); err != nil {
			return err
		}
		if d.i == before {
			if err := d.Skip(); err != nil {
				return err
			}
		}
	}
	if end >= 0 && d.i != end {
		return cborError(d.i, "an envelope holds more than one item")
	}
	return nil
}

// Skip passes over the next value.
func (d *Decoder) Skip() error {
	next, err := skip(d.b, d.i, d.depth)
	if err != nil {
		return err
	}
	d.i = next
	return nil
}

// Raw returns the bytes of the next value, and passes over it. An
// envelope is passed over by its length, its content left unchecked for
// whoever reads it (AppendJSON, a Decoder): a reply's megabytes are then
// walked once, not twice.
func (d *Decoder) Raw() ([]byte, error) {
	start := d.i
	if d.i+1 < len(d.b) && d.b[d.i] == majorTag<<5|24 && d.b[d.i+1] == tagEnvelope {
		major, n, at, _, err := head(d.b, d.i+2)
		if err != nil {
			return nil, err
		}
		if major != majorBytes {
			return nil, cborError(d.i, "an envelope that is not a byte string")
		}
		end, err := span(d.b, at, n)
		if err != nil {
			return nil, err
		}
		d.i = end
		return d.b[start:end], nil
	}
	if err := d.Skip(); err != nil {
		return nil, err
	}
	return d.b[start:d.i], nil
}

// AppendJSON appends the next value as JSON, and passes over it.
func (d *Decoder) AppendJSON(dst []byte) ([]byte, error) {
	dst, next, err := toJSON(dst, d.b, d.i, d.depth)
	if err != nil {
		return dst, err
	}
	d.i = next
	return dst, nil
}

// End reports an error if anything is left after what was read.
func (d *Decoder) End() error {
	if d.i != len(d.b) {
		return cborError(d.i, "bytes after the item")
	}
	return nil
}

// wrong is the error for a value of another kind than want.
func (d *Decoder) wrong(want string) error {
	if d.i >= len(d.b) {
		return cborError(d.i, "unexpected end, want %s", want)
	}
	return cborError(d.i, "initial byte %#x, want %s", d.b[d.i], want)
}

// skip returns where the item at b[i:] ends. It checks what toJSON
// checks, so that what it passes over converts.
func skip(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, cborError(i, "nested deeper than %d", maxDepth)
	}
	at := i
	major, arg, i, indef, err := head(b, i)
	if err != nil {
		return 0, err
	}
	switch major {
	case majorUnsigned:
		return i, nil
	case majorNegative:
		if arg > math.MaxInt64 {
			return 0, cborError(at, "integer out of range")
		}
		return i, nil
	case majorBytes:
		if arg%2 != 0 {
			return 0, cborError(at, "UTF-16 text of an odd length")
		}
		return span(b, i, arg)
	case majorText:
		return span(b, i, arg)
	case majorTag:
		if arg != tagEnvelope && arg != tagBase64 {
			return 0, cborError(at, "tag %d is not used by the protocol", arg)
		}
		major, n, start, _, err := head(b, i)
		if err != nil {
			return 0, err
		}
		if major != majorBytes {
			return 0, cborError(i, "tag %d on an item that is not a byte string", arg)
		}
		end, err := span(b, start, n)
		if err != nil || arg == tagBase64 {
			return end, err
		}
		after, err := skip(b[:end], start, depth+1)
		if err == nil && after != end {
			err = cborError(after, "an envelope holds more than one item")
		}
		return end, err
	case majorArray, majorMap:
		for n := uint64(0); ; n++ {
			if indef {
				if i >= len(b) {
					return 0, cborError(at, "no break ends the container")
				}
				if b[i] == cborBreak {
					return i + 1, nil
				}
			} else if n == arg {
				return i, nil
			} else if arg-n > uint64(len(b)-i) {
				return 0, cborError(at, "%d items cannot fit in what is left", arg)
			}
			if major == majorMap {
				if i >= len(b) || (b[i]>>5 != majorText && b[i]>>5 != majorBytes) {
					return 0, cborError(i, "a map key that is not a string")
				}
				if i, err = skip(b, i, depth+1); err != nil {
					return 0, err
				}
			}
			if i, err = skip(b, i, depth+1); err != nil {
				return 0, err
			}
		}
	}
	switch b[at] {
	case cborFalse, cborTrue, cborNull, cborUndefined, cborFloat32, cborFloat64:
		return i, nil
	case cborBreak:
		return 0, cborError(at, "a break outside a container")
	}
	return 0, cborError(at, "simple value %#x is not used by the protocol", b[at])
}
