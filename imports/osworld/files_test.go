package osworld

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// zipOf is a zip archive of the files given by name ("dir/" a folder).
func zipOf(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// tgzOf is a gzipped tar archive of the files given.
func tgzOf(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestFileCommandMetrics(t *testing.T) {
	runVerdicts(t, "check_image_file_size", `{"func":"check_image_file_size","result":{"type":"vm_file","path":"/home/user/Desktop/c.jpeg","dest":"c.jpeg"},"expected":{"type":"rule","rules":{"max_size":600}}}`, []verdictCase{
		{"smaller", map[string]string{"~/Desktop/c.jpeg": strings.Repeat("x", 599)}, nil, true},
		{"as large", map[string]string{"~/Desktop/c.jpeg": strings.Repeat("x", 600)}, nil, false},
		{"no file", nil, nil, false},
	})
	const bib = assetKey + "osworld/t/expected/gold.bib"
	runVerdicts(t, "compare_text_file, ignore_blanks", `{"func":"compare_text_file","result":{"type":"vm_file","path":"/home/user/Desktop/r.bib","dest":"r.bib"},
		"expected":{"type":"cloud_file","path":"https://files.example/gold.bib","dest":"gold.bib"},"options":{"ignore_blanks":true}}`, []verdictCase{
		{"the same", map[string]string{"~/Desktop/r.bib": "@a{x,\n  t = {A B}\n}\n", bib: "@a{x,\n  t = {A B}\n}\n"}, nil, true},
		{"blanks otherwise", map[string]string{"~/Desktop/r.bib": "  @a{x,\t\tt = {A   B}\n\n}", bib: "@a{x,\n  t = {A B}\n}\n"}, nil, true},
		{"a word changed", map[string]string{"~/Desktop/r.bib": "@a{x,\n  t = {A C}\n}\n", bib: "@a{x,\n  t = {A B}\n}\n"}, nil, false},
		{"a blank inside a word", map[string]string{"~/Desktop/r.bib": "@a{x,\n  t = {A B}\n}\n", bib: "@a{x,\n  t = {AB}\n}\n"}, nil, false},
		{"case differs", map[string]string{"~/Desktop/r.bib": "@A{x, t = {a b}}", bib: "@a{x, t = {A B}}"}, nil, false},
		{"no file", map[string]string{bib: "@a{x}"}, nil, false},
	})
	two := map[string]string{"slides/1.pdf": pdf("Lecture 1"), "slides/2.pdf": pdf("Lecture 2")}
	const gold = assetKey + "osworld/t/expected/gold.zip"
	archive := `{"func":"compare_archive","result":{"type":"vm_file","path":"/home/user/s.zip","dest":"s.zip"},
		"expected":{"type":"cloud_file","path":"https://files.example/s.zip","dest":"gold.zip"},"options":{"file_path":"slides","file_type":"pdf"}}`
	runVerdicts(t, "compare_archive", archive, []verdictCase{
		{"the same PDFs", map[string]string{"~/s.zip": zipOf(t, two), gold: zipOf(t, two)}, nil, true},
		{"one text changed", map[string]string{"~/s.zip": zipOf(t, map[string]string{"slides/1.pdf": pdf("Lecture 1"), "slides/2.pdf": pdf("Lecture 3")}), gold: zipOf(t, two)}, nil, false},
		{"a file named otherwise", map[string]string{"~/s.zip": zipOf(t, map[string]string{"slides/1.pdf": pdf("Lecture 1"), "slides/b.pdf": pdf("Lecture 2")}), gold: zipOf(t, two)}, nil, false},
		{"a file more", map[string]string{"~/s.zip": zipOf(t, map[string]string{"slides/1.pdf": pdf("Lecture 1"), "slides/2.pdf": pdf("Lecture 2"), "slides/3.pdf": pdf("x")}), gold: zipOf(t, two)}, nil, false},
		{"not in the folder", map[string]string{"~/s.zip": zipOf(t, map[string]string{"1.pdf": pdf("Lecture 1"), "2.pdf": pdf("Lecture 2")}), gold: zipOf(t, two)}, nil, false},
		{"not an archive", map[string]string{"~/s.zip": "PK", gold: zipOf(t, two)}, nil, false},
		{"empty folders", map[string]string{"~/s.zip": zipOf(t, map[string]string{"slides/": ""}), gold: zipOf(t, map[string]string{"slides/": ""})}, nil, false},
	})
	runVerdicts(t, "compare_archive of a tar.gz", `{"func":"compare_archive","result":{"type":"vm_file","path":"/home/user/Desktop/pdf.tar.gz","dest":"pdf.tar.gz"},
		"expected":{"type":"cloud_file","path":"https://files.example/pdf.tar.gz","dest":"pdf_gold.tar.gz"},"options":{"file_type":"pdf"}}`, []verdictCase{
		{"the same PDFs", map[string]string{"~/Desktop/pdf.tar.gz": tgzOf(t, map[string]string{"a b.pdf": pdf("A")}), assetKey + "osworld/t/expected/pdf_gold.tar.gz": tgzOf(t, map[string]string{"a b.pdf": pdf("A")})}, nil, true},
		{"another text", map[string]string{"~/Desktop/pdf.tar.gz": tgzOf(t, map[string]string{"a b.pdf": pdf("B")}), assetKey + "osworld/t/expected/pdf_gold.tar.gz": tgzOf(t, map[string]string{"a b.pdf": pdf("A")})}, nil, false},
	})
}
