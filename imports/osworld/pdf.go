package osworld

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/task"
)

// Packages are the Debian packages the imported checks run in the
// desktop beyond the tasks' applications: poppler-utils' pdftotext and
// pdfinfo read PDF files, unzip unpacks archives, bc compares the
// numbers of OSWorld's shell checks (a GNOME text scaling factor).
var Packages = []string{"poppler-utils", "unzip", "bc"}

// expectedDir is where a step after the agent copies an expected file
// that a check compares in the desktop: after the agent, so that it
// never sees it.
const expectedDir = "/tmp/osworld-expected"

// inDesktop copies the expected file (a file to fetch) into the desktop
// after the agent, and gives its path there.
func (c *converter) inDesktop(expected *Getter) (string, string) {
	asset, why := c.expectedFile(expected)
	if why != "" {
		return "", why
	}
	to := path.Join(expectedDir, c.f.ID, path.Base(asset))
	for _, st := range c.t.After {
		if st.Copy != nil && st.Copy.To == to {
			return to, ""
		}
	}
	c.t.After = append(c.t.After, task.Step{Copy: &task.Copy{Asset: asset, To: to}})
	return to, ""
}

// pdfText is the shell words that print a PDF's text (the file a shell
// word), pdftotext's (OSWorld reads it with PyMuPDF): the texts of two
// files compare equal or not alike in both.
func pdfText(file string) string { return "pdftotext -q " + file + " -" }

// trimmed sets the shell variable v to its value without the blanks
// around it, as Python's strip.
func trimmed(v string) string {
	return v + `="${` + v + `#"${` + v + `%%[![:space:]]*}"}"; ` + v + `="${` + v + `%"${` + v + `##*[![:space:]]}"}"`
}

// comparePDFs: compare_pdfs of one file of the desktop and the expected
// PDF (a file to fetch, copied in after the agent): its score, the
// texts' similarity, is 1 when the texts, blanks around them aside, are
// the same. The command fails when either is not a PDF.
func comparePDFs(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file of the desktop"
	}
	file := home(str(result.Path))
	if file == "" {
		return nil, "a vm_file without a path"
	}
	want, why := c.inDesktop(expected)
	if why != "" {
		return nil, why
	}
	zero := 0
	cmd := "a=$(" + pdfText(shellPath(file)) + ") && b=$(" + pdfText(shellPath(want)) + ") && { " + trimmed("a") + "; " + trimmed("b") + `; [ "$a" = "$b" ]; }`
	return []check.Spec{{Kind: check.CommandKind, Command: cmd, ExitCode: &zero}}, ""
}

// shellPath is a path of the desktop as a shell word: ~/ is $HOME/.
func shellPath(p string) string {
	if p == "~" {
		return `"$HOME"`
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return `"$HOME"/` + shellQuote(rest)
	}
	return shellQuote(p)
}

// pdfRelations are check_pdf_pages' relations as test's operators.
var pdfRelations = map[string]string{"eq": "-eq", "ne": "-ne", "lt": "-lt", "le": "-le", "gt": "-gt", "ge": "-ge"}

// pdfPages: check_pdf_pages, the PDF's number of pages (pdfinfo's) is in
// the relation to the rule's number.
func pdfPages(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file of the desktop"
	}
	file := home(str(result.Path))
	rel, why := ruleValue(expected, "relation")
	if why != "" {
		return nil, why
	}
	op, ok := pdfRelations[str(rel)]
	if !ok {
		return nil, fmt.Sprintf("relation %v", rel)
	}
	ref, why := ruleValue(expected, "ref_value")
	if why != "" {
		return nil, why
	}
	n, ok := ref.(float64)
	if !ok || n != math.Trunc(n) || n < 0 {
		return nil, "a ref_value that is not a whole number"
	}
	zero := 0
	cmd := "n=$(pdfinfo " + shellPath(file) + ` 2>/dev/null | sed -n 's/^Pages:[[:space:]]*//p') && [ "$n" ` + op + " " + str(n) + " ]"
	return []check.Spec{{Kind: check.CommandKind, Command: cmd, ExitCode: &zero}}, ""
}

func init() {
	metrics["compare_pdfs"] = comparePDFs
	metrics["check_pdf_pages"] = pdfPages
}
