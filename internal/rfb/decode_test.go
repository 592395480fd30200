package rfb

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"image"
	"image/color"
	"io"
	"strings"
	"testing"
)

// The helpers below build server messages by the letter of RFC 6143,
// independently of the decoder.

func rectHeader(x, y, w, h int, enc int32) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint16(b[0:], uint16(x))
	binary.BigEndian.PutUint16(b[2:], uint16(y))
	binary.BigEndian.PutUint16(b[4:], uint16(w))
	binary.BigEndian.PutUint16(b[6:], uint16(h))
	binary.BigEndian.PutUint32(b[8:], uint32(enc))
	return b
}

func fbUpdate(rects ...[]byte) []byte {
	b := []byte{0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], uint16(len(rects)))
	for _, r := range rects {
		b = append(b, r...)
	}
	return b
}

// rawRect encodes the pixels of img inside r as a Raw rectangle of 32 bpp
// little-endian pixels (blue, green, red, padding).
func rawRect(r image.Rectangle, img func(x, y int) color.RGBA) []byte {
	b := rectHeader(r.Min.X, r.Min.Y, r.Dx(), r.Dy(), encRaw)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img(x, y)
			b = append(b, c.B, c.G, c.R, 0x7f)
		}
	}
	return b
}

func cpixel(c color.RGBA) []byte { return []byte{c.B, c.G, c.R} }

// zrleEncoder writes ZRLE rectangles into one zlib stream, flushed after
// each rectangle as servers do.
type zrleEncoder struct {
	out bytes.Buffer
	zw  *zlib.Writer
}

func newZRLEEncoder() *zrleEncoder {
	e := &zrleEncoder{}
	e.zw = zlib.NewWriter(&e.out)
	return e
}

func (e *zrleEncoder) rect(r image.Rectangle, tiles []byte) []byte {
	e.out.Reset()
	e.zw.Write(tiles)
	e.zw.Flush()
	b := rectHeader(r.Min.X, r.Min.Y, r.Dx(), r.Dy(), encZRLE)
	b = binary.BigEndian.AppendUint32(b, uint32(e.out.Len()))
	return append(b, e.out.Bytes()...)
}

// tilePixels lists the colours of tile t of img in row order.
func tilePixels(t image.Rectangle, img func(x, y int) color.RGBA) []color.RGBA {
	var px []color.RGBA
	for y := t.Min.Y; y < t.Max.Y; y++ {
		for x := t.Min.X; x < t.Max.X; x++ {
			px = append(px, img(x, y))
		}
	}
	return px
}

func paletteOf(px []color.RGBA) ([]color.RGBA, map[color.RGBA]int) {
	var pal []color.RGBA
	idx := map[color.RGBA]int{}
	for _, c := range px {
		if _, ok := idx[c]; !ok {
			idx[c] = len(pal)
			pal = append(pal, c)
		}
	}
	return pal, idx
}

func runBytes(n int) []byte {
	var b []byte
	n--
	for n >= 255 {
		b = append(b, 255)
		n -= 255
	}
	return append(b, byte(n))
}

type run struct {
	c color.RGBA
	n int
}

func runsOf(px []color.RGBA) []run {
	var rs []run
	for _, c := range px {
		if len(rs) > 0 && rs[len(rs)-1].c == c {
			rs[len(rs)-1].n++
			continue
		}
		rs = append(rs, run{c, 1})
	}
	return rs
}

// encodeTile encodes the tile with sub-encoding sub (0 raw, 1 solid,
// 2-16 packed palette, 128 plain RLE, 130+ palette RLE).
func encodeTile(sub int, t image.Rectangle, img func(x, y int) color.RGBA) []byte {
	px := tilePixels(t, img)
	pal, idx := paletteOf(px)
	var b []byte
	switch {
	case sub == 0:
		b = []byte{0}
		for _, c := range px {
			b = append(b, cpixel(c)...)
		}
	case sub == 1:
		b = append([]byte{1}, cpixel(px[0])...)
	case sub <= 16:
		b = []byte{byte(len(pal))}
		for _, c := range pal {
			b = append(b, cpixel(c)...)
		}
		bits := 4
		if len(pal) == 2 {
			bits = 1
		} else if len(pal) <= 4 {
			bits = 2
		}
		for y := range t.Dy() {
			var cur byte
			used := 0
			for x := range t.Dx() {
				cur = cur<<bits | byte(idx[px[y*t.Dx()+x]])
				used += bits
				if used == 8 {
					b = append(b, cur)
					cur, used = 0, 0
				}
			}
			if used > 0 {
				b = append(b, cur<<(8-used))
			}
		}
	case sub == 128:
		b = []byte{128}
		for _, r := range runsOf(px) {
			b = append(b, cpixel(r.c)...)
			b = append(b, runBytes(r.n)...)
		}
	default:
		b = []byte{byte(128 + len(pal))}
		for _, c := range pal {
			b = append(b, cpixel(c)...)
		}
		for _, r := range runsOf(px) {
			if r.n == 1 {
				b = append(b, byte(idx[r.c]))
				continue
			}
			b = append(b, byte(idx[r.c])|128)
			b = append(b, runBytes(r.n)...)
		}
	}
	return b
}

// decodeAll runs the decoder over data on a w x h framebuffer and returns
// the messages up to the first error or the end.
func decodeAll(data []byte, w, h int) (*decoder, []message, error) {
	return decodeAllMax(data, w, h, MaxPixels)
}

func decodeAllMax(data []byte, w, h, maxPixels int) (*decoder, []message, error) {
	d := newDecoder(bufio.NewReader(bytes.NewReader(data)))
	d.maxPixels = maxPixels
	d.resize(w, h)
	var ms []message
	for {
		typ, err := d.r.ReadByte()
		if err == io.EOF {
			return d, ms, nil
		}
		m, err := d.message(typ)
		if err != nil {
			return d, ms, err
		}
		ms = append(ms, m)
	}
}

func checkImage(t *testing.T, fb *image.RGBA, r image.Rectangle, img func(x, y int) color.RGBA) {
	t.Helper()
	bad := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			want := img(x, y)
			want.A = 255
			if got := fb.RGBAAt(x, y); got != want {
				if bad < 5 {
					t.Errorf("pixel (%d,%d) = %v, want %v", x, y, got, want)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d pixels wrong in %v", bad, r)
	}
}

func gradient(x, y int) color.RGBA {
	return color.RGBA{uint8(x * 3), uint8(y * 5), uint8(x ^ y), 255}
}

func TestDecodeRaw(t *testing.T) {
	r := image.Rect(3, 2, 13, 9)
	d, ms, err := decodeAll(fbUpdate(rawRect(r, gradient)), 20, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, d.fb, r, gradient)
	if len(ms) != 1 || ms[0].area != 70 || len(ms[0].rects) != 1 || ms[0].rects[0] != r {
		t.Errorf("message = %+v, want one rectangle %v of area 70", ms, r)
	}
	// Outside the rectangle the framebuffer stays black.
	if got := d.fb.RGBAAt(0, 0); got != (color.RGBA{0, 0, 0, 255}) {
		t.Errorf("pixel (0,0) = %v, want opaque black", got)
	}
}

func TestDecodeCopyRect(t *testing.T) {
	full := image.Rect(0, 0, 16, 16)
	copyMsg := func(dst image.Rectangle, sx, sy int) []byte {
		b := rectHeader(dst.Min.X, dst.Min.Y, dst.Dx(), dst.Dy(), encCopyRect)
		return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, uint16(sx)), uint16(sy))
	}
	tests := []struct {
		name   string
		dst    image.Rectangle
		sx, sy int
	}{
		{"disjoint", image.Rect(10, 10, 14, 14), 0, 0},
		{"overlap down", image.Rect(2, 4, 12, 14), 2, 1},
		{"overlap up", image.Rect(2, 1, 12, 11), 3, 4},
		{"overlap right", image.Rect(5, 3, 15, 8), 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := decodeAll(fbUpdate(rawRect(full, gradient), copyMsg(tt.dst, tt.sx, tt.sy)), 16, 16)
			if err != nil {
				t.Fatal(err)
			}
			want := func(x, y int) color.RGBA {
				if (image.Point{x, y}).In(tt.dst) {
					return gradient(x-tt.dst.Min.X+tt.sx, y-tt.dst.Min.Y+tt.sy)
				}
				return gradient(x, y)
			}
			checkImage(t, d.fb, full, want)
		})
	}
}

func TestDecodeZRLE(t *testing.T) {
	const w, h = 150, 80
	stripes := func(x, y int) color.RGBA { // long runs across rows
		return []color.RGBA{{200, 10, 10, 255}, {10, 200, 10, 255}, {10, 10, 200, 255}}[(y*w+x)/300%3]
	}
	palette := func(n int) func(x, y int) color.RGBA {
		return func(x, y int) color.RGBA { return color.RGBA{uint8(40 * ((x + 2*y) % n)), uint8(n), 99, 255} }
	}
	solid := func(x, y int) color.RGBA { return color.RGBA{1, 2, 3, 255} }
	tests := []struct {
		name string
		sub  int
		img  func(x, y int) color.RGBA
	}{
		{"raw", 0, gradient},
		{"solid", 1, solid},
		{"packed 2 colours", 2, palette(2)},
		{"packed 3 colours", 3, palette(3)},
		{"packed 4 colours", 4, palette(4)},
		{"packed 5 colours", 5, palette(5)},
		{"packed 16 colours", 16, palette(16)},
		{"plain RLE", 128, stripes},
		{"plain RLE single pixels", 128, gradient},
		{"palette RLE", 130, stripes},
		{"palette RLE single pixels", 130, palette(7)},
	}
	// All cases share one zlib stream, one rectangle each, as on a
	// connection; the rectangle of 150x80 has tiles of 64, 64 and 22
	// columns and 64 and 16 rows.
	enc := newZRLEEncoder()
	var msgs []byte
	full := image.Rect(0, 0, w, h)
	for _, tt := range tests {
		var tiles []byte
		for ty := 0; ty < h; ty += 64 {
			for tx := 0; tx < w; tx += 64 {
				tile := image.Rect(tx, ty, min(tx+64, w), min(ty+64, h))
				tiles = append(tiles, encodeTile(tt.sub, tile, tt.img)...)
			}
		}
		msgs = append(msgs, fbUpdate(enc.rect(full, tiles))...)
	}
	d := newDecoder(bufio.NewReader(bytes.NewReader(msgs)))
	d.resize(w, h)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ, err := d.r.ReadByte()
			if err != nil {
				t.Fatal(err)
			}
			m, err := d.message(typ)
			if err != nil {
				t.Fatal(err)
			}
			if m.area != w*h {
				t.Errorf("area = %d, want %d", m.area, w*h)
			}
			checkImage(t, d.fb, full, tt.img)
		})
	}
}

func TestDecodeZRLESubRectangle(t *testing.T) {
	// A rectangle away from the origin: tiles start at its corner.
	r := image.Rect(7, 5, 7+70, 5+66)
	var tiles []byte
	for ty := r.Min.Y; ty < r.Max.Y; ty += 64 {
		for tx := r.Min.X; tx < r.Max.X; tx += 64 {
			tiles = append(tiles, encodeTile(0, image.Rect(tx, ty, min(tx+64, r.Max.X), min(ty+64, r.Max.Y)), gradient)...)
		}
	}
	d, _, err := decodeAll(fbUpdate(newZRLEEncoder().rect(r, tiles)), 100, 80)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, d.fb, r, gradient)
	if got := d.fb.RGBAAt(6, 5); got != (color.RGBA{0, 0, 0, 255}) {
		t.Errorf("pixel left of the rectangle = %v, want black", got)
	}
}

func TestDecodeResize(t *testing.T) {
	ext := append(rectHeader(0, 0, 30, 20, encExtendedDesktopSize), 1, 0, 0, 0)
	ext = append(ext, make([]byte, 16)...)
	extFailed := append(rectHeader(1, 3, 50, 50, encExtendedDesktopSize), 0, 0, 0, 0)
	tests := []struct {
		name        string
		msg         []byte
		w, h        int
		resized     bool
		wantErrText string
	}{
		{"DesktopSize", fbUpdate(rectHeader(0, 0, 40, 30, encDesktopSize), rawRect(image.Rect(30, 20, 40, 30), gradient)), 40, 30, true, ""},
		{"ExtendedDesktopSize", fbUpdate(ext), 30, 20, true, ""},
		{"ExtendedDesktopSize refused", fbUpdate(extFailed), 10, 10, false, ""},
		{"same size", fbUpdate(rectHeader(0, 0, 10, 10, encDesktopSize)), 10, 10, false, ""},
		{"too large", fbUpdate(rectHeader(0, 0, 65535, 65535, encDesktopSize)), 10, 10, true, "larger than"},
		{"rectangle outside after shrink", fbUpdate(rectHeader(0, 0, 5, 5, encDesktopSize), rawRect(image.Rect(0, 0, 6, 6), gradient)), 5, 5, true, "outside the 5x5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := append(fbUpdate(rawRect(image.Rect(0, 0, 10, 10), gradient)), tt.msg...)
			d, ms, err := decodeAll(msg, 10, 10)
			ms = ms[min(1, len(ms)):]
			if tt.wantErrText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrText) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErrText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.fb.Rect.Size(); got != (image.Point{tt.w, tt.h}) {
				t.Errorf("size = %v, want %dx%d", got, tt.w, tt.h)
			}
			if ms[0].resized != tt.resized {
				t.Errorf("resized = %v, want %v", ms[0].resized, tt.resized)
			}
			// The pixels painted before, in the area both sizes share,
			// are kept.
			checkImage(t, d.fb, image.Rect(0, 0, min(tt.w, 10), min(tt.h, 10)).Intersect(image.Rect(0, 0, 10, 10)), gradient)
		})
	}
}

func TestDecodeOtherMessages(t *testing.T) {
	cut := []byte{3, 0, 0, 0, 0, 0, 0, 5, 'c', 'a', 'f', 0xe9, '!'}
	colours := []byte{1, 0, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}
	lastRect := fbUpdate(rectHeader(0, 0, 0, 0, encLastRect))
	lastRect[3] = 9 // nine rectangles announced; LastRect ends them
	data := append(append(append(append([]byte{}, colours...), 2), cut...), lastRect...)
	data = append(data, 2)
	_, ms, err := decodeAll(data, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	var types []byte
	for _, m := range ms {
		types = append(types, m.typ)
	}
	if !bytes.Equal(types, []byte{1, 2, 3, 0, 2}) {
		t.Fatalf("message types = %v, want [1 2 3 0 2]", types)
	}
	if ms[2].text != "café!" {
		t.Errorf("cut text = %q, want %q", ms[2].text, "café!")
	}
}

func TestDecodeErrors(t *testing.T) {
	zr := func(tiles ...byte) []byte { return fbUpdate(newZRLEEncoder().rect(image.Rect(0, 0, 4, 2), tiles)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown message", []byte{77}, "unknown server message type 77"},
		{"rectangle outside", fbUpdate(rectHeader(5, 5, 6, 6, encRaw)), "outside the 10x10 framebuffer"},
		{"empty rectangle outside", fbUpdate(rectHeader(5000, 0, 0, 3, encRaw)), "outside the 10x10 framebuffer"},
		{"empty copy source outside", fbUpdate(append(rectHeader(0, 0, 0, 4, encCopyRect), 200, 0, 0, 0)), "source"},
		{"encoding not asked for", fbUpdate(rectHeader(0, 0, 1, 1, 5)), "encoding 5, which was not asked for"},
		{"truncated raw", fbUpdate(append(rectHeader(0, 0, 2, 2, encRaw), 1, 2, 3, 4, 5)), "EOF"},
		{"copy source outside", fbUpdate(append(rectHeader(0, 0, 4, 4, encCopyRect), 0, 8, 0, 8)), "source"},
		{"ZRLE too long", fbUpdate(append(rectHeader(0, 0, 1, 1, encZRLE), 0x7f, 0, 0, 0)), "more than a 1x1 rectangle needs"},
		{"ZRLE bad zlib", fbUpdate(append(rectHeader(0, 0, 1, 1, encZRLE), 0, 0, 0, 2, 1, 2)), "zlib"},
		{"ZRLE sub-encoding 17", zr(17), "unknown ZRLE sub-encoding 17"},
		{"ZRLE sub-encoding 129", zr(129), "unknown ZRLE sub-encoding 129"},
		{"ZRLE palette index", zr(3, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0xff, 0xff), "palette index 3 is beyond the palette of 3"},
		{"ZRLE run too long", zr(128, 1, 2, 3, 8), "longer than the 8 left"},
		{"ZRLE palette RLE run too long", zr(130, 1, 1, 1, 2, 2, 2, 0x81, 255, 255), "longer than the 8 left"},
		{"ZRLE tile data missing", zr(0, 1, 2, 3), "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeAll(tt.data, 10, 10)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// FuzzServerMessages feeds arbitrary bytes to the message decoder: it
// must return an error or succeed, never panic, and never allocate more
// than the small framebuffer allows.
func FuzzServerMessages(f *testing.F) {
	enc := newZRLEEncoder()
	tile := encodeTile(130, image.Rect(0, 0, 16, 12), gradient)
	f.Add(fbUpdate(rawRect(image.Rect(0, 0, 4, 4), gradient)))
	f.Add(fbUpdate(enc.rect(image.Rect(0, 0, 16, 12), tile)))
	f.Add(fbUpdate(rectHeader(0, 0, 8, 8, encDesktopSize), append(rectHeader(1, 1, 2, 2, encCopyRect), 0, 0, 0, 0)))
	f.Add([]byte{3, 0, 0, 0, 0, 0, 0, 2, 'h', 'i', 2, 1, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		// A DesktopSize may grow the framebuffer up to the bound, which
		// is MaxPixels on a connection and smaller here to keep the
		// fuzzer fast.
		const bound = 1 << 16
		d, _, _ := decodeAllMax(data, 64, 48, bound)
		if n := d.fb.Rect.Dx() * d.fb.Rect.Dy(); n > bound {
			t.Fatalf("framebuffer of %d pixels", n)
		}
	})
}

// FuzzZRLE feeds arbitrary inflated tile data, compressed as a server
// would, to the ZRLE decoder.
func FuzzZRLE(f *testing.F) {
	f.Add(uint8(16), uint8(12), encodeTile(0, image.Rect(0, 0, 16, 12), gradient))
	f.Add(uint8(63), uint8(47), encodeTile(128, image.Rect(0, 0, 64, 48), gradient))
	f.Add(uint8(20), uint8(20), encodeTile(5, image.Rect(0, 0, 21, 21), func(x, y int) color.RGBA { return color.RGBA{uint8(x % 5), 0, 0, 255} }))
	f.Add(uint8(9), uint8(9), encodeTile(131, image.Rect(0, 0, 10, 10), func(x, y int) color.RGBA { return color.RGBA{uint8(x % 3), 0, 0, 255} }))
	f.Fuzz(func(t *testing.T, w, h uint8, tiles []byte) {
		r := image.Rect(0, 0, int(w)%100+1, int(h)%80+1)
		msg := fbUpdate(newZRLEEncoder().rect(r, tiles))
		_, ms, err := decodeAll(msg, 100, 80)
		if err == nil && (len(ms) != 1 || ms[0].area != r.Dx()*r.Dy()) {
			t.Fatalf("decoded %+v without error, want one rectangle of %v", ms, r)
		}
	})
}
