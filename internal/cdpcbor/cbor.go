// Package cdpcbor reads and writes the binary form of the Chrome DevTools
// Protocol: CBOR (RFC 8949) as Chromium's crdtp library writes it, which
// a browser started with --remote-debugging-pipe=cbor speaks.
//
//   - each message, and each map within one, is an envelope: tag 24 on a
//     byte string (with a 32-bit length) that holds one map;
//   - maps and arrays are of indefinite length, ended by a break;
//   - a string is UTF-8 text, or an untagged byte string that holds
//     UTF-16 (little-endian) where the browser keeps the text that way;
//   - binary data (a screenshot) is a byte string with tag 22, which JSON
//     carries in base64;
//   - integers are 32-bit, other numbers doubles.
//
// AppendJSON converts an item to the JSON the browser would have sent,
// AppendCBOR converts JSON to what the browser reads, and a Decoder reads
// an item's values in place, for decoders that skip JSON altogether.
// No CBOR package for Go reads crdtp's dialect (UTF-16 byte strings,
// envelopes) into JSON without decoding it into values first, hence this
// one.
package cdpcbor

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

// Initial bytes and tags of crdtp's CBOR.
const (
	majorUnsigned = 0
	majorNegative = 1
	majorBytes    = 2
	majorText     = 3
	majorArray    = 4
	majorMap      = 5
	majorTag      = 6
	majorSimple   = 7

	tagEnvelope = 24 // a byte string holding an encoded item
	tagBase64   = 22 // binary data, base64 in JSON

	cborFalse     = 0xf4
	cborTrue      = 0xf5
	cborNull      = 0xf6
	cborUndefined = 0xf7
	cborFloat32   = 0xfa
	cborFloat64   = 0xfb
	cborBreak     = 0xff
	indefinite    = 31
	startMap      = majorMap<<5 | indefinite
	startArray    = majorArray<<5 | indefinite
)

// envelopeHeader starts an envelope: tag 24, then a byte string with a
// 4-byte length.
var envelopeHeader = [3]byte{majorTag<<5 | 24, tagEnvelope, majorBytes<<5 | 26}

// EnvelopeSize is the length of an envelope's header: what comes before
// the item it holds.
const EnvelopeSize = len(envelopeHeader) + 4

// EnvelopeLength reports the length of what the envelope whose header b
// starts with holds; false if b does not start with an envelope's header.
func EnvelopeLength(b []byte) (int, bool) {
	if len(b) < EnvelopeSize || !bytes.Equal(b[:len(envelopeHeader)], envelopeHeader[:]) {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(b[len(envelopeHeader):])), true
}

// StartMap appends the start of a map in its envelope, and returns where
// the envelope starts, for EndMap.
func StartMap(dst []byte) ([]byte, int) {
	at := len(dst)
	dst = append(dst, envelopeHeader[:]...)
	return append(dst, 0, 0, 0, 0, startMap), at
}

// EndMap ends the map StartMap started at at, and writes its envelope's
// length.
func EndMap(dst []byte, at int) ([]byte, error) {
	dst = append(dst, cborBreak)
	n := len(dst) - at - EnvelopeSize
	if n > math.MaxUint32 {
		return dst, fmt.Errorf("cdpcbor: a map of %d bytes", n)
	}
	binary.BigEndian.PutUint32(dst[at+len(envelopeHeader):], uint32(n))
	return dst, nil
}

// AppendText appends s as a text string.
func AppendText(dst []byte, s string) []byte {
	return append(appendHead(dst, majorText, uint64(len(s))), s...)
}

// AppendInt appends n as an integer.
func AppendInt(dst []byte, n int64) []byte {
	if n < 0 {
		return appendHead(dst, majorNegative, uint64(-1-n))
	}
	return appendHead(dst, majorUnsigned, uint64(n))
}

// maxDepth bounds the nesting of containers a message may have.
const maxDepth = 1000

// cborError is ErrMalformed with what is wrong and where.
func cborError(at int, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, at, fmt.Sprintf(format, args...))
}

// head reads the head of the item at b[i:]: its major type, its
// argument (a value, a length or a count), and where what follows it
// starts. indef reports a length or count of indefinite length.
func head(b []byte, i int) (major byte, arg uint64, next int, indef bool, err error) {
	if i >= len(b) {
		return 0, 0, 0, false, cborError(i, "unexpected end")
	}
	ib := b[i]
	major, info := ib>>5, ib&31
	i++
	switch {
	case info < 24:
		return major, uint64(info), i, false, nil
	case info == 24 && i+1 <= len(b):
		return major, uint64(b[i]), i + 1, false, nil
	case info == 25 && i+2 <= len(b):
		return major, uint64(binary.BigEndian.Uint16(b[i:])), i + 2, false, nil
	case info == 26 && i+4 <= len(b):
		return major, uint64(binary.BigEndian.Uint32(b[i:])), i + 4, false, nil
	case info == 27 && i+8 <= len(b):
		return major, binary.BigEndian.Uint64(b[i:]), i + 8, false, nil
	case info == indefinite && (major == majorArray || major == majorMap || major == majorSimple):
		return major, 0, i, true, nil
	case info < 28:
		return 0, 0, 0, false, cborError(i-1, "unexpected end")
	}
	return 0, 0, 0, false, cborError(i-1, "initial byte %#x is not used by the protocol", ib)
}

// span reads the definite length n at b[i:] as the bounds of what it
// counts.
func span(b []byte, i int, n uint64) (int, error) {
	if n > uint64(len(b)-i) {
		return 0, cborError(i, "a length of %d runs past the end", n)
	}
	return i + int(n), nil
}

// AppendJSON appends the JSON text of the CBOR item b to dst: the JSON the
// browser would have sent. b holds one item and nothing after it.
func AppendJSON(dst, b []byte) ([]byte, error) {
	dst, end, err := toJSON(dst, b, 0, 0)
	if err == nil && end != len(b) {
		err = cborError(end, "bytes after the item")
	}
	return dst, err
}

// toJSON appends the JSON text of the CBOR item at b[i:] to dst, and
// returns where the item ends.
func toJSON(dst, b []byte, i, depth int) ([]byte, int, error) {
	if depth > maxDepth {
		return dst, 0, cborError(i, "nested deeper than %d", maxDepth)
	}
	at := i
	major, arg, i, indef, err := head(b, i)
	if err != nil {
		return dst, 0, err
	}
	switch major {
	case majorUnsigned:
		return strconv.AppendUint(dst, arg, 10), i, nil
	case majorNegative:
		if arg > math.MaxInt64 {
			return dst, 0, cborError(at, "integer out of range")
		}
		return strconv.AppendInt(dst, -1-int64(arg), 10), i, nil
	case majorBytes:
		end, err := span(b, i, arg)
		if err != nil {
			return dst, 0, err
		}
		if arg%2 != 0 {
			return dst, 0, cborError(at, "UTF-16 text of an odd length")
		}
		return appendUTF16(dst, b[i:end]), end, nil
	case majorText:
		end, err := span(b, i, arg)
		if err != nil {
			return dst, 0, err
		}
		return appendString(dst, b[i:end]), end, nil
	case majorArray, majorMap:
		return containerToJSON(dst, b, at, major, arg, i, indef, depth)
	case majorTag:
		return tagToJSON(dst, b, at, arg, i, depth)
	}
	// majorSimple
	switch b[at] {
	case cborFalse:
		return append(dst, "false"...), i, nil
	case cborTrue:
		return append(dst, "true"...), i, nil
	case cborNull, cborUndefined:
		return append(dst, "null"...), i, nil
	case cborFloat32:
		return appendFloat(dst, float64(math.Float32frombits(uint32(arg)))), i, nil
	case cborFloat64:
		return appendFloat(dst, math.Float64frombits(arg)), i, nil
	case cborBreak:
		return dst, 0, cborError(at, "a break outside a container")
	}
	return dst, 0, cborError(at, "simple value %#x is not used by the protocol", b[at])
}

// containerToJSON appends an array or a map whose head was read: count
// items (pairs, for a map), or up to a break for indef.
func containerToJSON(dst, b []byte, at int, major byte, count uint64, i int, indef bool, depth int) ([]byte, int, error) {
	open, close := byte('['), byte(']')
	if major == majorMap {
		open, close = '{', '}'
	}
	dst = append(dst, open)
	var err error
	for n := uint64(0); ; n++ {
		if indef {
			if i >= len(b) {
				return dst, 0, cborError(at, "no break ends the container")
			}
			if b[i] == cborBreak {
				i++
				break
			}
		} else if n == count {
			break
		} else if count-n > uint64(len(b)-i) {
			return dst, 0, cborError(at, "%d items cannot fit in what is left", count)
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		if major == majorMap {
			if i >= len(b) || (b[i]>>5 != majorText && b[i]>>5 != majorBytes) {
				return dst, 0, cborError(i, "a map key that is not a string")
			}
			if dst, i, err = toJSON(dst, b, i, depth+1); err != nil {
				return dst, 0, err
			}
			dst = append(dst, ':')
		}
		if dst, i, err = toJSON(dst, b, i, depth+1); err != nil {
			return dst, 0, err
		}
	}
	return append(dst, close), i, nil
}

// tagToJSON appends the item under a tag whose head was read: an
// envelope's content, or binary data in base64.
func tagToJSON(dst, b []byte, at int, tag uint64, i, depth int) ([]byte, int, error) {
	if tag != tagEnvelope && tag != tagBase64 {
		return dst, 0, cborError(at, "tag %d is not used by the protocol", tag)
	}
	major, n, start, _, err := head(b, i)
	if err != nil {
		return dst, 0, err
	}
	if major != majorBytes {
		return dst, 0, cborError(i, "tag %d on an item that is not a byte string", tag)
	}
	end, err := span(b, start, n)
	if err != nil {
		return dst, 0, err
	}
	if tag == tagBase64 {
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, b[start:end])
		return append(dst, '"'), end, nil
	}
	dst, after, err := toJSON(dst, b[:end], start, depth+1)
	if err != nil {
		return dst, 0, err
	}
	if after != end {
		return dst, 0, cborError(after, "an envelope holds more than one item")
	}
	return dst, end, nil
}

// appendString appends s, UTF-8 text, as a JSON string; bytes that are
// not UTF-8 become U+FFFD.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscaped(dst, c)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscaped appends the JSON escape of the byte c: a quote, a
// backslash, a control character, or a byte that is not UTF-8 (U+FFFD).
func appendEscaped(dst []byte, c byte) []byte {
	const hex = "0123456789abcdef"
	switch {
	case c == '"' || c == '\\':
		return append(dst, '\\', c)
	case c == '\n':
		return append(dst, '\\', 'n')
	case c == '\r':
		return append(dst, '\\', 'r')
	case c == '\t':
		return append(dst, '\\', 't')
	case c < 0x20:
		return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
	}
	return append(dst, `\ufffd`...)
}

// appendUTF16 appends s, UTF-16 little-endian text, as a JSON string.
func appendUTF16(dst, s []byte) []byte { return appendString(dst, utf16Text(s)) }

// utf16Text is s, UTF-16 little-endian text, as UTF-8; an unpaired
// surrogate becomes U+FFFD.
func utf16Text(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i+1 < len(s); i += 2 {
		r := rune(binary.LittleEndian.Uint16(s[i:]))
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			if r < 0xdc00 && i+3 < len(s) {
				r2 = utf16.DecodeRune(r, rune(binary.LittleEndian.Uint16(s[i+2:])))
			}
			if r2 != utf8.RuneError {
				i += 2
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// mendUTF8 is s with each byte that is not UTF-8 replaced by U+FFFD, as
// appendString writes it.
func mendUTF8(s []byte) []byte {
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		out = utf8.AppendRune(out, r) // RuneError for a byte that is not UTF-8
		i += size
	}
	return out
}

// appendFloat appends f as JavaScript writes a number; JSON has no NaN or
// infinity, which become null.
func appendFloat(dst []byte, f float64) []byte {
	switch a := math.Abs(f); {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(dst, "null"...)
	case a != 0 && (a < 1e-6 || a >= 1e21):
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// AppendCBOR appends the CBOR of the JSON value j to dst, as the browser
// reads it: maps in envelopes, integers of 32 bits (others as doubles).
func AppendCBOR(dst []byte, j []byte) ([]byte, error) {
	var dec jsonv2.Decoder
	dec.Reset(bytes.NewReader(j))
	var envelopes []int // where each open map's envelope starts
	for {
		tok, err := dec.ReadToken()
		if errors.Is(err, io.EOF) {
			if len(envelopes) > 0 {
				return dst, io.ErrUnexpectedEOF
			}
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		switch tok.Kind() {
		case 'n':
			dst = append(dst, cborNull)
		case 'f':
			dst = append(dst, cborFalse)
		case 't':
			dst = append(dst, cborTrue)
		case '"':
			dst = AppendText(dst, tok.String())
		case '0':
			dst = appendNumber(dst, tok.String())
		case '{':
			var at int
			dst, at = StartMap(dst)
			envelopes = append(envelopes, at)
		case '}':
			at := envelopes[len(envelopes)-1]
			envelopes = envelopes[:len(envelopes)-1]
			if dst, err = EndMap(dst, at); err != nil {
				return dst, err
			}
		case '[':
			dst = append(dst, startArray)
		case ']':
			dst = append(dst, cborBreak)
		}
	}
}

// appendNumber appends a JSON number: an integer that fits in 32 bits as
// one, any other as a double.
func appendNumber(dst []byte, s string) []byte {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return AppendInt(dst, n)
	}
	f, _ := strconv.ParseFloat(s, 64) // the decoder read it as a number
	dst = append(dst, cborFloat64)
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}

// appendHead appends the head of an item of a major type with argument n.
func appendHead(dst []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(dst, m|byte(n))
	case n <= math.MaxUint8:
		return append(dst, m|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, m|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, m|27), n)
}
