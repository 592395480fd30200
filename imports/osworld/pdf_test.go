package osworld

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/check"
)

// pdf is a PDF file of one page per text given, each text drawn in one
// line of Helvetica.
func pdf(pages ...string) string {
	var objs []string
	kids := []string{}
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", 4+2*i))
	}
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids ["+strings.Join(kids, " ")+fmt.Sprintf("] /Count %d >>", len(pages)),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, text := range pages {
		stream := "BT /F1 24 Tf 72 700 Td (" + text + ") Tj ET"
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.String()
}

// runVerdicts imports a task of the evaluator and runs its command
// checks with bash, as the desktop does, in a home of the case's files
// (assetKey names the expected files, which the steps after the agent
// copy in): the verdict must be the one OSWorld's function gives.
func runVerdicts(t *testing.T, name, evaluator string, cases []verdictCase) {
	t.Helper()
	for _, tool := range []string{"pdftotext", "pdfinfo", "unzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian's poppler-utils, unzip)", tool)
		}
	}
	var e Evaluator
	if err := json.Unmarshal([]byte(evaluator), &e); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	it := Import(&File{ID: "t", Instruction: "do it", Evaluator: e}, "os", "t.json", "", "")
	if len(it.Reasons) > 0 {
		t.Fatalf("%s: not imported: %v", name, it.Reasons)
	}
	if _, err := check.CompileAll(it.Task.Checks, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, tc := range cases {
		home, expected := t.TempDir(), t.TempDir()
		copies := map[string]string{}
		for _, st := range it.Task.After {
			if st.Copy != nil {
				copies[st.Copy.Asset] = st.Copy.To
			}
		}
		for p, s := range tc.files {
			var dst string
			if asset, ok := strings.CutPrefix(p, assetKey); ok {
				to, ok := copies[asset]
				if !ok {
					t.Fatalf("%s: no step after the agent copies %s (%v)", name, asset, it.Task.After)
				}
				dst = filepath.Join(expected, strings.TrimPrefix(to, expectedDir))
			} else {
				dst = filepath.Join(home, strings.TrimPrefix(p, "~/"))
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pass := true
		var out []string
		for _, c := range it.Task.Checks {
			alts := []check.Spec{c}
			if c.Kind == check.AnyOf {
				alts = c.Any
			}
			any := false
			for _, a := range alts {
				if a.Kind != check.CommandKind {
					t.Fatalf("%s: a %s check", name, a.Kind)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				cmd := exec.CommandContext(ctx, "/bin/bash", "-c", strings.ReplaceAll(a.Command, expectedDir, expected))
				cmd.Env = append(os.Environ(), "HOME="+home)
				b, err := cmd.CombinedOutput()
				cancel()
				out = append(out, string(b))
				any = any || err == nil
			}
			pass = pass && any
		}
		if pass != tc.pass {
			t.Errorf("%s, %s: pass %v, want %v (%q; checks %+v)", name, tc.name, pass, tc.pass, out, it.Task.Checks)
		}
	}
}

func TestPDFMetrics(t *testing.T) {
	const asset = assetKey + "osworld/t/expected/gold.pdf"
	cloud := `"expected":{"type":"cloud_file","path":"https://files.example/gold.pdf","dest":"gold.pdf"}`
	runVerdicts(t, "compare_pdfs", `{"func":"compare_pdfs","result":{"type":"vm_file","path":"/home/user/Desktop/My Invoice #1.pdf","dest":"i.pdf"},`+cloud+`}`, []verdictCase{
		{"the same text", map[string]string{"~/Desktop/My Invoice #1.pdf": pdf("Invoice 243729", "Total 12"), asset: pdf("Invoice 243729", "Total 12")}, nil, true},
		{"one word changed", map[string]string{"~/Desktop/My Invoice #1.pdf": pdf("Invoice 243729", "Total 13"), asset: pdf("Invoice 243729", "Total 12")}, nil, false},
		{"a page less", map[string]string{"~/Desktop/My Invoice #1.pdf": pdf("Invoice 243729"), asset: pdf("Invoice 243729", "Total 12")}, nil, false},
		{"not a PDF", map[string]string{"~/Desktop/My Invoice #1.pdf": "Invoice 243729", asset: pdf("Invoice 243729")}, nil, false},
		{"no file", map[string]string{asset: pdf("Invoice 243729")}, nil, false},
	})
	runVerdicts(t, "check_pdf_pages", `{"func":"check_pdf_pages","result":{"type":"vm_file","path":"/home/user/fit.pdf","dest":"fit.pdf"},"expected":{"type":"rule","rules":{"relation":"eq","ref_value":1}}}`, []verdictCase{
		{"one page", map[string]string{"~/fit.pdf": pdf("all of it")}, nil, true},
		{"two pages", map[string]string{"~/fit.pdf": pdf("half", "the rest")}, nil, false},
		{"not a PDF", map[string]string{"~/fit.pdf": "all of it"}, nil, false},
	})
	runVerdicts(t, "check_pdf_pages, at most", `{"func":"check_pdf_pages","result":{"type":"vm_file","path":"/home/user/fit.pdf","dest":"fit.pdf"},"expected":{"type":"rule","rules":{"relation":"le","ref_value":2}}}`, []verdictCase{
		{"two pages", map[string]string{"~/fit.pdf": pdf("half", "the rest")}, nil, true},
		{"three pages", map[string]string{"~/fit.pdf": pdf("a", "b", "c")}, nil, false},
	})
	runVerdicts(t, "compare_pdfs of the first file found", `{"func":["compare_pdfs","compare_pdfs"],"conj":"or",
		"result":[{"type":"vm_file","path":"/home/user/Desktop/s.pdf","dest":"1.pdf"},{"type":"vm_file","path":"/home/user/s.pdf","dest":"2.pdf"}],
		"expected":[{"type":"cloud_file","path":"https://files.example/s.pdf","dest":"gold_1.pdf"},{"type":"cloud_file","path":"https://files.example/s.pdf","dest":"gold_2.pdf"}]}`, []verdictCase{
		{"in the home", map[string]string{"~/s.pdf": pdf("Summary"), assetKey + "osworld/t/expected/gold_1.pdf": pdf("Summary"), assetKey + "osworld/t/expected/gold_2.pdf": pdf("Summary")}, nil, true},
		{"another text", map[string]string{"~/s.pdf": pdf("Summery"), assetKey + "osworld/t/expected/gold_1.pdf": pdf("Summary"), assetKey + "osworld/t/expected/gold_2.pdf": pdf("Summary")}, nil, false},
	})
}
