// Package fastpng encodes opaque RGBA screenshots as PNG quickly: rows are
// filtered with one cheap filter and deflated in parallel bands, each band
// ending on a byte boundary (a sync flush), so the bands join into one
// valid zlib stream whose checksum is combined from the bands' checksums.
package fastpng

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"image"
	"io"
	"runtime"
	"sync"
)

// Filter is the PNG row filter applied to every row.
type Filter byte

// Row filters.
const (
	None Filter = 0
	Sub  Filter = 1
	Up   Filter = 2
)

// Options tune the encoder.
type Options struct {
	Filter Filter // row filter; the zero value is None
	Level  int    // flate level; 0 means flate.BestSpeed
	Bands  int    // parallel bands; 0 means 2 per CPU
}

// Encode writes img as an 8-bit RGB PNG (alpha is dropped: screenshots are
// opaque).
func Encode(w io.Writer, img *image.RGBA, o Options) error {
	b := img.Rect
	width, height := b.Dx(), b.Dy()
	if width <= 0 || height <= 0 {
		return errors.New("fastpng: empty image")
	}
	if o.Level == 0 {
		o.Level = flate.BestSpeed
	}
	if o.Bands <= 0 {
		o.Bands = 2 * runtime.GOMAXPROCS(0)
	}
	bands := min(o.Bands, height)
	type band struct {
		data  []byte
		adler uint32
		raw   int
		err   error
	}
	out := make([]band, bands)
	var wg sync.WaitGroup
	for i := range bands {
		y0, y1 := b.Min.Y+height*i/bands, b.Min.Y+height*(i+1)/bands
		wg.Add(1)
		go func() {
			defer wg.Done()
			rowLen := 1 + 3*width
			raw := make([]byte, rowLen*(y1-y0))
			for y := y0; y < y1; y++ {
				filterRow(raw[(y-y0)*rowLen:(y-y0+1)*rowLen], img, y, o.Filter)
			}
			var buf bytes.Buffer
			buf.Grow(len(raw) / 8)
			fw, err := flate.NewWriter(&buf, o.Level)
			if err == nil {
				_, err = fw.Write(raw)
			}
			if err == nil {
				if i == bands-1 {
					err = fw.Close()
				} else {
					err = fw.Flush()
				}
			}
			out[i] = band{data: buf.Bytes(), adler: adler32.Checksum(raw), raw: len(raw), err: err}
		}()
	}
	wg.Wait()
	var sum uint32 = 1
	for _, bd := range out {
		if bd.err != nil {
			return bd.err
		}
		sum = adler32Combine(sum, bd.adler, bd.raw)
	}
	if _, err := w.Write([]byte("\x89PNG\r\n\x1a\n")); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits, truecolour
	if err := chunk(w, "IHDR", ihdr[:]); err != nil {
		return err
	}
	// One IDAT chunk: zlib header, the bands, the Adler-32 checksum.
	n := 2 + 4
	for _, bd := range out {
		n += len(bd.data)
	}
	idat := make([]byte, 0, n)
	idat = append(idat, 0x78, 0x01)
	for _, bd := range out {
		idat = append(idat, bd.data...)
	}
	idat = binary.BigEndian.AppendUint32(idat, sum)
	if err := chunk(w, "IDAT", idat); err != nil {
		return err
	}
	return chunk(w, "IEND", nil)
}

// filterRow writes row y of img as filter byte plus filtered RGB bytes.
func filterRow(dst []byte, img *image.RGBA, y int, f Filter) {
	b := img.Rect
	w := b.Dx()
	src := img.Pix[img.PixOffset(b.Min.X, y):][:4*w]
	dst[0] = byte(f)
	d := dst[1:]
	switch {
	case f == Up && y > b.Min.Y:
		prev := img.Pix[img.PixOffset(b.Min.X, y-1):][:4*w]
		for x := 0; x < w; x++ {
			d[3*x] = src[4*x] - prev[4*x]
			d[3*x+1] = src[4*x+1] - prev[4*x+1]
			d[3*x+2] = src[4*x+2] - prev[4*x+2]
		}
	case f == Sub:
		var pr, pg, pb byte
		for x := 0; x < w; x++ {
			r, g, bl := src[4*x], src[4*x+1], src[4*x+2]
			d[3*x], d[3*x+1], d[3*x+2] = r-pr, g-pg, bl-pb
			pr, pg, pb = r, g, bl
		}
	default: // None, and Up on the first row (the row above is zero)
		for x := 0; x < w; x++ {
			d[3*x], d[3*x+1], d[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
		}
	}
}

func chunk(w io.Writer, typ string, data []byte) error {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], typ)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// adler32Combine returns the Adler-32 of A followed by B from the sums of
// A (a1) and of B (a2) and B's length.
func adler32Combine(a1, a2 uint32, len2 int) uint32 {
	const base = 65521
	rem := uint32(len2 % base)
	s1 := a1 & 0xffff
	s2 := (rem * s1) % base
	s1 += (a2 & 0xffff) + base - 1
	s2 += (a1 >> 16) + (a2 >> 16) + base - rem
	if s1 >= base {
		s1 -= base
	}
	if s1 >= base {
		s1 -= base
	}
	if s2 >= base<<1 {
		s2 -= base << 1
	}
	if s2 >= base {
		s2 -= base
	}
	return s2<<16 | s1
}
