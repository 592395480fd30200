package osworld

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// docx is a Word document whose body is the paragraphs given (w:p
// elements, the namespace prefix w).
func docx(t *testing.T, paras ...string) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, err := z.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write([]byte(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		strings.Join(paras, "") + `</w:body></w:document>`))
	if err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// para is a paragraph of runs (each its w:rPr's children and text), with
// its w:pPr's children.
func para(pPr string, runs ...[2]string) string {
	var b strings.Builder
	b.WriteString("<w:p><w:pPr>" + pPr + "</w:pPr>")
	for _, r := range runs {
		b.WriteString("<w:r><w:rPr>" + r[0] + "</w:rPr><w:t xml:space=\"preserve\">" + r[1] + "</w:t></w:r>")
	}
	return b.String() + "</w:p>"
}

func TestWriterMetrics(t *testing.T) {
	const doc = "~/Desktop/d.docx"
	res := `"result":{"type":"vm_file","path":"/home/user/Desktop/d.docx","dest":"d.docx"}`
	centred := para(`<w:jc w:val="center"/>`, [2]string{"", "Title"})
	verdicts(t, "is_first_line_centered", `{"func":"is_first_line_centered",`+res+`}`, []verdictCase{
		{"centred", map[string]string{doc: docx(t, centred, para("", [2]string{"", "body"}))}, nil, true},
		{"left", map[string]string{doc: docx(t, para(`<w:jc w:val="left"/>`, [2]string{"", "Title"}), centred)}, nil, false},
		{"not written", map[string]string{doc: docx(t, para("", [2]string{"", "Title"}))}, nil, false},
		{"no paragraph", map[string]string{doc: docx(t)}, nil, false},
		{"not a document", map[string]string{doc: "hello"}, nil, false},
	})
	times := func(text string) [2]string {
		return [2]string{`<w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman"/>`, text}
	}
	verdicts(t, "compare_font_names", `{"func":"compare_font_names","expected":{"type":"rule","rules":{"font_name":"Times New Roman"}},`+res+`}`, []verdictCase{
		{"every run", map[string]string{doc: docx(t, para("", times("a"), times("b")), para("", times("c")))}, nil, true},
		{"one run in another font", map[string]string{doc: docx(t, para("", times("a"), [2]string{`<w:rFonts w:ascii="Arial"/>`, "b"}))}, nil, false},
		{"one run without a font", map[string]string{doc: docx(t, para("", times("a"), [2]string{"", "b"}))}, nil, false},
		{"an empty paragraph", map[string]string{doc: docx(t, para("", times("a")), para(""))}, nil, true},
	})
	const asset = "osworld/t/expected/gold.docx"
	cloud := `"expected":{"type":"cloud_file","path":"https://files.example/gold.docx","dest":"gold.docx"}`
	italic14 := [2]string{`<w:i/><w:sz w:val="28"/>`, "it"}
	italic12 := [2]string{`<w:i/><w:sz w:val="24"/>`, "it"}
	plain := [2]string{"", "plain"}
	verdicts(t, "check_italic_font_size_14", `{"func":"check_italic_font_size_14",`+cloud+`,`+res+`}`, []verdictCase{
		{"italic at 14, as expected", map[string]string{doc: docx(t, para("", plain, italic14)), assetKey + asset: docx(t, para("", plain, italic14))}, nil, true},
		{"italic at 12", map[string]string{doc: docx(t, para("", plain, italic12)), assetKey + asset: docx(t, para("", plain, italic12))}, nil, false},
		{"italic without a size", map[string]string{doc: docx(t, para("", [2]string{"<w:i/>", "it"})), assetKey + asset: docx(t, para("", [2]string{"<w:i/>", "it"}))}, nil, false},
		{"no italic", map[string]string{doc: docx(t, para("", plain)), assetKey + asset: docx(t, para("", plain))}, nil, true},
		{"the text changed", map[string]string{doc: docx(t, para("", plain, italic14), para("", plain)), assetKey + asset: docx(t, para("", plain, italic14))}, nil, false},
	})
	struck := [2]string{"<w:strike/>", "gone"}
	verdicts(t, "evaluate_strike_through_last_paragraph", `{"func":"evaluate_strike_through_last_paragraph",`+cloud+`,`+res+`}`, []verdictCase{
		{"struck", map[string]string{doc: docx(t, para("", plain), para("", struck, struck)), assetKey + asset: docx(t, para("", plain), para("", struck, struck))}, nil, true},
		{"one run not", map[string]string{doc: docx(t, para("", plain), para("", struck, plain)), assetKey + asset: docx(t, para("", plain), para("", struck, plain))}, nil, false},
		{"another paragraph struck", map[string]string{doc: docx(t, para("", struck), para("", plain)), assetKey + asset: docx(t, para("", struck), para("", plain))}, nil, false},
		{"struck off", map[string]string{doc: docx(t, para("", [2]string{`<w:strike w:val="0"/>`, "gone"})), assetKey + asset: docx(t, para("", [2]string{`<w:strike w:val="0"/>`, "gone"}))}, nil, false},
	})
}

func TestLineSpacingMetric(t *testing.T) {
	const doc = "~/Desktop/d.docx"
	const asset = assetKey + "osworld/t/expected/gold.docx"
	double := `<w:spacing w:line="480" w:lineRule="auto"/>`
	gold := docx(t, para(double, [2]string{"", "One"}), para("", [2]string{"", "Two"}))
	verdicts(t, "compare_line_spacing", `{"func":"compare_line_spacing","result":{"type":"vm_file","path":"/home/user/Desktop/d.docx","dest":"d.docx"},
		"expected":{"type":"cloud_file","path":"https://files.example/gold.docx","dest":"gold.docx"}}`, []verdictCase{
		{"double, as expected", map[string]string{doc: gold, asset: gold}, nil, true},
		{"single", map[string]string{doc: docx(t, para("", [2]string{"", "One"}), para("", [2]string{"", "Two"})), asset: gold}, nil, false},
		{"another text", map[string]string{doc: docx(t, para(double, [2]string{"", "Uno"}), para("", [2]string{"", "Two"})), asset: gold}, nil, false},
	})
}
