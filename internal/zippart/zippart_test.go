package zippart

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// TestRead: a part within the bound is read whole; one past it is
// refused by its declared size, and one whose declared size lies is not
// read.
func TestRead(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, body := range map[string]string{"small.xml": "<a/>", "big.xml": strings.Repeat("x", 100)} {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]*zip.File{}
	for _, f := range r.File {
		parts[f.Name] = f
	}
	if b, err := Read(parts["small.xml"], 50); err != nil || string(b) != "<a/>" {
		t.Fatalf("small part: %q, %v", b, err)
	}
	if _, err := Read(parts["big.xml"], 50); err == nil || !strings.Contains(err.Error(), "big.xml is 100 bytes, more than 50") {
		t.Fatalf("big part by its declared size: %v", err)
	}
	lying := *parts["big.xml"]
	lying.UncompressedSize64 = 10
	// archive/zip refuses a member that inflates past its declared size
	// (or the bound stops it first): either way it is not read.
	if b, err := Read(&lying, 50); err == nil || !strings.HasPrefix(err.Error(), "big.xml") {
		_ = b
		t.Fatalf("a part whose declared size lies: %v", err)
	}
}
