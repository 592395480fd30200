package ooxml

import (
	"strings"
	"testing"
)

// bodyOf is a document of paragraphs, each its w:pPr's children and its
// text.
func bodyOf(t *testing.T, paras ...[2]string) *Document {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	for _, p := range paras {
		b.WriteString("<w:p><w:pPr>" + p[0] + "</w:pPr><w:r><w:t>" + p[1] + "</w:t></w:r></w:p>")
	}
	b.WriteString("</w:body></w:document>")
	d, err := documentXML([]byte(b.String()), map[string]string{})
	must(t, err)
	return d
}

// Each row mirrors OSWorld's compare_line_spacing (compare_docx_files,
// then each paragraph's python-docx line_spacing) and gives its verdict.
func TestCompareLineSpacing(t *testing.T) {
	double := `<w:spacing w:line="480" w:lineRule="auto"/>`
	exact := `<w:spacing w:line="480" w:lineRule="exact"/>`
	want := []([2]string){{double, "One"}, {"", "Two"}}
	tests := []struct {
		name  string
		got   [][2]string
		score float64
	}{
		{"the same", [][2]string{{double, "One"}, {"", "Two"}}, 1},
		{"a space before and after does not count", [][2]string{{`<w:spacing w:before="120" w:line="480" w:lineRule="auto"/>`, "One"}, {`<w:spacing w:after="200"/>`, "Two"}}, 1},
		{"single spacing", [][2]string{{`<w:spacing w:line="240" w:lineRule="auto"/>`, "One"}, {"", "Two"}}, 0},
		{"exact, not a multiple", [][2]string{{exact, "One"}, {"", "Two"}}, 0},
		{"none set", [][2]string{{"", "One"}, {"", "Two"}}, 0},
		{"set on the other paragraph", [][2]string{{"", "One"}, {double, "Two"}}, 0},
		{"the text changed", [][2]string{{double, "One"}, {"", "Three"}}, 0},
		{"a paragraph more", [][2]string{{double, "One"}, {"", "Two"}, {"", ""}}, 0},
	}
	for _, tc := range tests {
		score, why := CompareDocuments(bodyOf(t, tc.got...), bodyOf(t, want...), DocOptions{LineSpacing: true})
		if score != tc.score {
			t.Errorf("%s: score %v (%s), want %v", tc.name, score, why, tc.score)
		}
	}
	if d := bodyOf(t, [2]string{double, "x"}, [2]string{exact, "y"}, [2]string{`<w:spacing w:line="360"/>`, "z"}); d.Paragraphs[0].LineSpacing != "2" || d.Paragraphs[1].LineSpacing != "480tw" || d.Paragraphs[2].LineSpacing != "360tw" {
		t.Errorf("line spacing read: %+v", d.Paragraphs)
	}
}
