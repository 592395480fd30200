// Package agenttest has the helpers of the agents' tests: made-up
// screenshots and the images a model request carries.
package agenttest

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"sort"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

// Screenshot is a PNG (or JPEG) of a grey screen with a dark box: a
// button at box.
func Screenshot(t testing.TB, s action.Size, box image.Rectangle, format string) []byte {
	img := image.NewRGBA(image.Rect(0, 0, s.W, s.H))
	for i := range img.Pix {
		img.Pix[i] = 220
		if i%4 == 3 {
			img.Pix[i] = 255 // opaque, as screenshots are
		}
	}
	for y := max(box.Min.Y, 0); y < min(box.Max.Y, s.H); y++ {
		for x := max(box.Min.X, 0); x < min(box.Max.X, s.W); x++ {
			img.SetRGBA(x, y, color.RGBA{20, 20, 20, 255})
		}
	}
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ImageSizeIn decodes the base64 image of a request's JSON (the first
// "data" field of an image source) and returns its size.
func ImageSizeIn(t testing.TB, v any) action.Size {
	t.Helper()
	var find func(v any) string
	find = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if x["type"] == "base64" {
				if d, ok := x["data"].(string); ok {
					return d
				}
			}
			if u, ok := x["image_url"].(string); ok && strings.HasPrefix(u, "data:") {
				return u[strings.Index(u, ",")+1:]
			}
			if u, ok := x["url"].(string); ok && strings.HasPrefix(u, "data:") {
				return u[strings.Index(u, ",")+1:]
			}
			for _, k := range sortedKeys(x) {
				if d := find(x[k]); d != "" {
					return d
				}
			}
		case []any:
			for _, e := range x {
				if d := find(e); d != "" {
					return d
				}
			}
		}
		return ""
	}
	data := find(v)
	if data == "" {
		t.Fatal("no image in the request")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the image in the request does not decode: %v", err)
	}
	return action.Size{W: cfg.Width, H: cfg.Height}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
