package rfb

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"sync/atomic"
)

// Server message types of RFC 6143.
const (
	msgFramebufferUpdate   = 0
	msgSetColourMapEntries = 1
	msgBell                = 2
	msgServerCutText       = 3
)

// message is what the decoder made of one server message.
type message struct {
	typ byte
	// For a FramebufferUpdate: the rectangles drawn, their total area and
	// whether the framebuffer was resized (then everything is new).
	rects   []image.Rectangle
	area    int
	resized bool
	// For a ServerCutText: the text, as UTF-8.
	text string
}

// decoder reads server messages and keeps a framebuffer. It is used by one
// goroutine only. It reads from r and never further than the message it
// decodes.
type decoder struct {
	r  *bufio.Reader
	fb *image.RGBA
	// onRect, if set, is called before each rectangle is read (the client
	// extends its read deadline there).
	onRect func()

	// The ZRLE zlib stream, one for the whole connection: zsrc holds the
	// compressed bytes received and not yet consumed; zr inflates them.
	zsrc chunkReader
	zr   io.ReadCloser
	zbuf *bufio.Reader

	scratch []byte
	// maxPixels bounds the framebuffer a DesktopSize may ask for.
	maxPixels int
	// zrleRects counts the ZRLE rectangles decoded (read by tests while
	// the reader runs).
	zrleRects atomic.Int64
}

func newDecoder(r *bufio.Reader) *decoder {
	return &decoder{r: r, fb: image.NewRGBA(image.Rect(0, 0, 0, 0)), maxPixels: MaxPixels}
}

// resize replaces the framebuffer with a black one of w x h.
func (d *decoder) resize(w, h int) {
	d.fb = image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 3; i < len(d.fb.Pix); i += 4 {
		d.fb.Pix[i] = 255
	}
}

// message decodes the server message of type typ, whose type byte has
// been read.
func (d *decoder) message(typ byte) (message, error) {
	m := message{typ: typ}
	switch typ {
	case msgFramebufferUpdate:
		return m, d.update(&m)
	case msgSetColourMapEntries:
		var b [5]byte
		if _, err := io.ReadFull(d.r, b[:]); err != nil {
			return m, fmt.Errorf("reading SetColourMapEntries: %w", err)
		}
		n := int64(binary.BigEndian.Uint16(b[3:]))
		if _, err := io.CopyN(io.Discard, d.r, n*6); err != nil {
			return m, fmt.Errorf("reading SetColourMapEntries: %w", err)
		}
		return m, nil
	case msgBell:
		return m, nil
	case msgServerCutText:
		var b [7]byte
		if _, err := io.ReadFull(d.r, b[:]); err != nil {
			return m, fmt.Errorf("reading ServerCutText: %w", err)
		}
		n := binary.BigEndian.Uint32(b[3:])
		text, err := readText(d.r, n, maxCutText)
		if err != nil {
			return m, fmt.Errorf("reading ServerCutText of %d bytes: %w", n, err)
		}
		m.text = text
		return m, nil
	}
	return m, fmt.Errorf("unknown server message type %d", typ)
}

// update decodes a FramebufferUpdate.
func (d *decoder) update(m *message) error {
	var b [3]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return fmt.Errorf("reading FramebufferUpdate: %w", err)
	}
	n := int(binary.BigEndian.Uint16(b[1:]))
	for i := range n {
		if d.onRect != nil {
			d.onRect()
		}
		var h [12]byte
		if _, err := io.ReadFull(d.r, h[:]); err != nil {
			return fmt.Errorf("reading rectangle %d of %d: %w", i+1, n, err)
		}
		x := int(binary.BigEndian.Uint16(h[0:]))
		y := int(binary.BigEndian.Uint16(h[2:]))
		w := int(binary.BigEndian.Uint16(h[4:]))
		ht := int(binary.BigEndian.Uint16(h[6:]))
		enc := int32(binary.BigEndian.Uint32(h[8:]))
		r := image.Rect(x, y, x+w, y+ht)
		var err error
		switch enc {
		case encLastRect:
			return nil
		case encDesktopSize:
			var changed bool
			changed, err = d.setSize(w, ht)
			m.resized = m.resized || changed
		case encExtendedDesktopSize:
			var changed bool
			changed, err = d.extendedDesktopSize(y, w, ht)
			m.resized = m.resized || changed
		case encRaw, encCopyRect, encZRLE:
			// Checked by coordinates: image.Rectangle.In holds for any
			// empty rectangle, wherever it lies.
			if x+w > d.fb.Rect.Dx() || y+ht > d.fb.Rect.Dy() {
				return fmt.Errorf("rectangle %v (encoding %d) lies outside the %dx%d framebuffer", r, enc, d.fb.Rect.Dx(), d.fb.Rect.Dy())
			}
			switch enc {
			case encRaw:
				err = d.raw(r)
			case encCopyRect:
				err = d.copyRect(r)
			case encZRLE:
				err = d.zrle(r)
				d.zrleRects.Add(1)
			}
			m.rects = append(m.rects, r)
			m.area += w * ht
		default:
			return fmt.Errorf("rectangle %v has encoding %d, which was not asked for", r, enc)
		}
		if err != nil {
			return fmt.Errorf("rectangle %v (encoding %d): %w", r, enc, err)
		}
	}
	return nil
}

// setSize resizes the framebuffer as DesktopSize asks and reports whether
// the size changed. Some servers (libvncserver's, under x11vnc) send the
// current size again with every non-incremental update, so the same size
// keeps the framebuffer as it is; a new size keeps the pixels of the area
// both sizes share (the server sends the rest afterwards).
func (d *decoder) setSize(w, h int) (bool, error) {
	if w*h > d.maxPixels {
		return false, fmt.Errorf("new framebuffer size %dx%d is larger than %d pixels", w, h, d.maxPixels)
	}
	if d.fb.Rect.Dx() == w && d.fb.Rect.Dy() == h {
		return false, nil
	}
	old := d.fb
	d.resize(w, h)
	common := old.Rect.Intersect(d.fb.Rect)
	n := common.Dx() * 4
	for y := range common.Dy() {
		copy(d.fb.Pix[d.fb.PixOffset(0, y):][:n], old.Pix[old.PixOffset(0, y):][:n])
	}
	return true, nil
}

// extendedDesktopSize reads the screen list of an ExtendedDesktopSize
// rectangle and resizes unless the status (sent as y) reports an error.
func (d *decoder) extendedDesktopSize(status, w, h int) (bool, error) {
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return false, err
	}
	if _, err := io.CopyN(io.Discard, d.r, int64(b[0])*16); err != nil {
		return false, err
	}
	if status != 0 {
		return false, nil
	}
	return d.setSize(w, h)
}

// raw reads r's pixels, 4 bytes each (blue, green, red, unused).
func (d *decoder) raw(r image.Rectangle) error {
	row := d.buffer(r.Dx() * 4)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		if _, err := io.ReadFull(d.r, row); err != nil {
			return err
		}
		off := d.fb.PixOffset(r.Min.X, y)
		dst := d.fb.Pix[off : off+len(row)]
		for i := 0; i < len(row); i += 4 {
			dst[i], dst[i+1], dst[i+2], dst[i+3] = row[i+2], row[i+1], row[i], 255
		}
	}
	return nil
}

// copyRect copies the source rectangle named in the body to r.
func (d *decoder) copyRect(r image.Rectangle) error {
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return err
	}
	sx, sy := int(binary.BigEndian.Uint16(b[0:])), int(binary.BigEndian.Uint16(b[2:]))
	src := image.Rect(sx, sy, sx+r.Dx(), sy+r.Dy())
	if src.Max.X > d.fb.Rect.Dx() || src.Max.Y > d.fb.Rect.Dy() {
		return fmt.Errorf("CopyRect source %v lies outside the %dx%d framebuffer", src, d.fb.Rect.Dx(), d.fb.Rect.Dy())
	}
	n := r.Dx() * 4
	copyRow := func(i int) {
		so := d.fb.PixOffset(sx, sy+i)
		do := d.fb.PixOffset(r.Min.X, r.Min.Y+i)
		copy(d.fb.Pix[do:do+n], d.fb.Pix[so:so+n])
	}
	// Rows in the order that reads each source row before it is written.
	if sy < r.Min.Y {
		for i := r.Dy() - 1; i >= 0; i-- {
			copyRow(i)
		}
	} else {
		for i := range r.Dy() {
			copyRow(i)
		}
	}
	return nil
}

// buffer returns a scratch slice of n bytes.
func (d *decoder) buffer(n int) []byte {
	if cap(d.scratch) < n {
		d.scratch = make([]byte, n)
	}
	return d.scratch[:n]
}

// chunkReader serves the compressed bytes received so far to the inflater.
// It is an io.ByteReader, so flate reads from it directly, byte by byte,
// without reading ahead.
type chunkReader struct{ b []byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

func (c *chunkReader) ReadByte() (byte, error) {
	if len(c.b) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	b := c.b[0]
	c.b = c.b[1:]
	return b, nil
}

// zrleTile is the ZRLE tile size.
const zrleTile = 64

// zrle decodes a ZRLE rectangle: a length, then that many bytes of the
// connection's zlib stream, which inflate to 64x64 tiles in row order.
// Each rectangle's data is flushed by the server, so the tiles inflate
// from the bytes received without reading past them.
func (d *decoder) zrle(r image.Rectangle) error {
	var b [4]byte
	if _, err := io.ReadFull(d.r, b[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(b[:]))
	tiles := ((r.Dx() + zrleTile - 1) / zrleTile) * ((r.Dy() + zrleTile - 1) / zrleTile)
	// The largest honest encoding is plain RLE of every pixel (4 bytes a
	// pixel) plus a byte a tile; deflate adds a little to incompressible
	// data.
	if limit := r.Dx()*r.Dy()*5 + tiles*64 + 4096; n > limit {
		return fmt.Errorf("ZRLE data of %d bytes is more than a %dx%d rectangle needs (at most %d)", n, r.Dx(), r.Dy(), limit)
	}
	left := len(d.zsrc.b)
	buf := make([]byte, left+n)
	copy(buf, d.zsrc.b)
	if _, err := io.ReadFull(d.r, buf[left:]); err != nil {
		return err
	}
	d.zsrc.b = buf
	if d.zr == nil {
		zr, err := zlib.NewReader(&d.zsrc)
		if err != nil {
			return fmt.Errorf("ZRLE zlib stream: %w", err)
		}
		d.zr = zr
		d.zbuf = bufio.NewReaderSize(zr, 16<<10)
	}
	for ty := r.Min.Y; ty < r.Max.Y; ty += zrleTile {
		for tx := r.Min.X; tx < r.Max.X; tx += zrleTile {
			t := image.Rect(tx, ty, min(tx+zrleTile, r.Max.X), min(ty+zrleTile, r.Max.Y))
			if err := d.zrleTile(t); err != nil {
				return fmt.Errorf("ZRLE tile %v: %w", t, err)
			}
		}
	}
	return nil
}

// zrleTile decodes one tile from the inflated stream. Pixels are CPIXELs:
// 3 bytes, blue, green, red.
func (d *decoder) zrleTile(t image.Rectangle) error {
	z := d.zbuf
	sub, err := z.ReadByte()
	if err != nil {
		return err
	}
	tw, th := t.Dx(), t.Dy()
	var palette [128][3]byte
	readPalette := func(n int) error {
		buf := d.buffer(n * 3)
		if _, err := io.ReadFull(z, buf); err != nil {
			return err
		}
		for i := range n {
			palette[i] = [3]byte{buf[i*3+2], buf[i*3+1], buf[i*3]}
		}
		return nil
	}
	pix := d.fb.Pix
	set := func(i int, c [3]byte) {
		off := d.fb.PixOffset(t.Min.X+i%tw, t.Min.Y+i/tw)
		pix[off], pix[off+1], pix[off+2], pix[off+3] = c[0], c[1], c[2], 255
	}
	switch {
	case sub == 0: // raw CPIXELs
		buf := d.buffer(tw * th * 3)
		if _, err := io.ReadFull(z, buf); err != nil {
			return err
		}
		for y := range th {
			off := d.fb.PixOffset(t.Min.X, t.Min.Y+y)
			row := buf[y*tw*3 : (y+1)*tw*3]
			for x := 0; x < tw; x++ {
				o := off + x*4
				pix[o], pix[o+1], pix[o+2], pix[o+3] = row[x*3+2], row[x*3+1], row[x*3], 255
			}
		}
	case sub == 1: // solid
		if err := readPalette(1); err != nil {
			return err
		}
		c := palette[0]
		for y := range th {
			off := d.fb.PixOffset(t.Min.X, t.Min.Y+y)
			for x := range tw {
				o := off + x*4
				pix[o], pix[o+1], pix[o+2], pix[o+3] = c[0], c[1], c[2], 255
			}
		}
	case sub <= 16: // packed palette
		p := int(sub)
		if err := readPalette(p); err != nil {
			return err
		}
		bits := 4
		switch {
		case p == 2:
			bits = 1
		case p <= 4:
			bits = 2
		}
		rowBytes := (tw*bits + 7) / 8
		buf := d.buffer(rowBytes * th)
		if _, err := io.ReadFull(z, buf); err != nil {
			return err
		}
		mask := byte(1<<bits - 1)
		for y := range th {
			row := buf[y*rowBytes:]
			for x := range tw {
				bit := x * bits
				idx := int(row[bit/8]>>(8-bits-bit%8)) & int(mask)
				if idx >= p {
					return fmt.Errorf("palette index %d is beyond the palette of %d colours", idx, p)
				}
				set(y*tw+x, palette[idx])
			}
		}
	case sub == 128: // plain RLE
		var c [3]byte
		for i := 0; i < tw*th; {
			if _, err := io.ReadFull(z, c[:]); err != nil {
				return err
			}
			run, err := runLength(z, tw*th-i)
			if err != nil {
				return err
			}
			col := [3]byte{c[2], c[1], c[0]}
			for range run {
				set(i, col)
				i++
			}
		}
	case sub >= 130: // palette RLE
		p := int(sub) - 128
		if err := readPalette(p); err != nil {
			return err
		}
		for i := 0; i < tw*th; {
			idx, err := z.ReadByte()
			if err != nil {
				return err
			}
			run := 1
			if idx&128 != 0 {
				idx &= 127
				if run, err = runLength(z, tw*th-i); err != nil {
					return err
				}
			}
			if int(idx) >= p {
				return fmt.Errorf("palette index %d is beyond the palette of %d colours", idx, p)
			}
			for range run {
				set(i, palette[idx])
				i++
			}
		}
	default:
		return fmt.Errorf("unknown ZRLE sub-encoding %d", sub)
	}
	return nil
}

// runLength reads a ZRLE run length (bytes of 255 continue it; the value
// is their sum plus one) no longer than left.
func runLength(z io.ByteReader, left int) (int, error) {
	n := 1
	for {
		b, err := z.ReadByte()
		if err != nil {
			return 0, err
		}
		n += int(b)
		if n > left {
			return 0, fmt.Errorf("run of at least %d pixels is longer than the %d left in the tile", n, left)
		}
		if b != 255 {
			return n, nil
		}
	}
}
