package ooxml

import (
	"archive/zip"
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// zipOf writes the parts into a package, [Content_Types].xml first.
func zipOf(t testing.TB, parts [][2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, p := range parts {
		f, err := w.Create(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const relsHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
const relBase = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

// para is a docx paragraph of the fixtures: runs of text, "*" before a
// run making it bold.
type para []string

// docxOf writes a minimal text document.
func docxOf(t testing.TB, paras ...para) []byte {
	t.Helper()
	var body strings.Builder
	for _, p := range paras {
		body.WriteString("<w:p>")
		for _, r := range p {
			rpr := ""
			if strings.HasPrefix(r, "*") {
				r, rpr = r[1:], "<w:rPr><w:b/></w:rPr>"
			}
			fmt.Fprintf(&body, `<w:r>%s<w:t xml:space="preserve">%s</w:t></w:r>`, rpr, html.EscapeString(r))
		}
		body.WriteString("</w:p>")
	}
	return zipOf(t, [][2]string{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", relsHead + `<Relationship Id="rId1" Type="` + relBase + `officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body.String() + `<w:sectPr/></w:body></w:document>`},
	})
}

// box is a text box of the pptx fixtures.
type box struct {
	x, y     int64
	text     string
	bold     bool
	align    string
	autoform bool
}

// slide is a slide of the fixtures.
type slide struct {
	boxes      []box
	transition string
}

const (
	nsP       = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	emptyTree = `<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld>`
	theme     = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="T"><a:themeElements><a:clrScheme name="T"><a:dk1><a:srgbClr val="000000"/></a:dk1><a:lt1><a:srgbClr val="FFFFFF"/></a:lt1><a:dk2><a:srgbClr val="1F497D"/></a:dk2><a:lt2><a:srgbClr val="EEECE1"/></a:lt2><a:accent1><a:srgbClr val="4F81BD"/></a:accent1><a:accent2><a:srgbClr val="C0504D"/></a:accent2><a:accent3><a:srgbClr val="9BBB59"/></a:accent3><a:accent4><a:srgbClr val="8064A2"/></a:accent4><a:accent5><a:srgbClr val="4BACC6"/></a:accent5><a:accent6><a:srgbClr val="F79646"/></a:accent6><a:hlink><a:srgbClr val="0000FF"/></a:hlink><a:folHlink><a:srgbClr val="800080"/></a:folHlink></a:clrScheme><a:fontScheme name="T"><a:majorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont><a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme><a:fmtScheme name="T"><a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:fillStyleLst><a:lnStyleLst><a:ln><a:noFill/></a:ln><a:ln><a:noFill/></a:ln><a:ln><a:noFill/></a:ln></a:lnStyleLst><a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst><a:bgFillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:bgFillStyleLst></a:fmtScheme></a:themeElements></a:theme>`
)

// pptxOf writes a minimal presentation: a master, a layout, a theme and
// the slides.
func pptxOf(t testing.TB, slides ...slide) []byte {
	t.Helper()
	ct := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/><Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"/><Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"/><Override PartName="/ppt/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/>`
	presRels := relsHead + `<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="slideMasters/slideMaster1.xml"/><Relationship Id="rId2" Type="` + relBase + `theme" Target="theme/theme1.xml"/>`
	ids := ""
	var parts [][2]string
	for i, s := range slides {
		n := i + 1
		ct += fmt.Sprintf(`<Override PartName="/ppt/slides/slide%d.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`, n)
		presRels += fmt.Sprintf(`<Relationship Id="rId%d" Type="%sslide" Target="slides/slide%d.xml"/>`, n+10, relBase, n)
		ids += fmt.Sprintf(`<p:sldId id="%d" r:id="rId%d"/>`, 255+n, n+10)
		var tree strings.Builder
		for j, b := range s.boxes {
			rpr := `<a:rPr lang="en-US"/>`
			if b.bold {
				rpr = `<a:rPr lang="en-US" b="1"/>`
			}
			ppr := ""
			if b.align != "" {
				ppr = `<a:pPr algn="` + b.align + `"/>`
			}
			txBox := ` txBox="1"`
			if b.autoform {
				txBox = ""
			}
			fmt.Fprintf(&tree, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Box %d"/><p:cNvSpPr%s/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="3000000" cy="600000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p>%s<a:r>%s<a:t>%s</a:t></a:r></a:p></p:txBody></p:sp>`,
				j+2, j+1, txBox, b.x, b.y, ppr, rpr, html.EscapeString(b.text))
		}
		tr := ""
		if s.transition != "" {
			tr = `<p:transition spd="med"><p:` + s.transition + `/></p:transition>`
		}
		sp := strings.Replace(emptyTree, "<p:grpSpPr/>", "<p:grpSpPr/>"+tree.String(), 1)
		parts = append(parts,
			[2]string{fmt.Sprintf("ppt/slides/slide%d.xml", n), `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld ` + nsP + `>` + sp + `<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr>` + tr + `</p:sld>`},
			[2]string{fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", n), relsHead + `<Relationship Id="rId1" Type="` + relBase + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`})
	}
	ct += `</Types>`
	presRels += `</Relationships>`
	return zipOf(t, append([][2]string{
		{"[Content_Types].xml", ct},
		{"_rels/.rels", relsHead + `<Relationship Id="rId1" Type="` + relBase + `officeDocument" Target="ppt/presentation.xml"/></Relationships>`},
		{"ppt/presentation.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation ` + nsP + `><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>` + ids + `</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`},
		{"ppt/_rels/presentation.xml.rels", presRels},
		{"ppt/slideMasters/slideMaster1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sldMaster ` + nsP + `>` + emptyTree + `<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>`},
		{"ppt/slideMasters/_rels/slideMaster1.xml.rels", relsHead + `<Relationship Id="rId1" Type="` + relBase + `slideLayout" Target="../slideLayouts/slideLayout1.xml"/><Relationship Id="rId2" Type="` + relBase + `theme" Target="../theme/theme1.xml"/></Relationships>`},
		{"ppt/slideLayouts/slideLayout1.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sldLayout ` + nsP + ` type="blank">` + emptyTree + `<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`},
		{"ppt/slideLayouts/_rels/slideLayout1.xml.rels", relsHead + `<Relationship Id="rId1" Type="` + relBase + `slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`},
		{"ppt/theme/theme1.xml", theme},
	}, parts...))
}

// book is a workbook of the fixtures: sheet Sheet1 with a header row and
// three rows of numbers, changed by edit.
func book(t testing.TB, edit func(f *excelize.File)) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	rows := [][]any{{"Item", "Qty", "Price"}, {"pen", 3, 1.5}, {"ink", 2, 4.25}, {"pad", 5, 2}}
	for r, row := range rows {
		if err := f.SetSheetRow("Sheet1", fmt.Sprintf("A%d", r+1), &row); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(f)
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
