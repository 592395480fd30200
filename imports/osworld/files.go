package osworld

import (
	"fmt"
	"math"
	"strings"

	"github.com/proctor-eval/proctor/check"
)

// The metrics here compare or measure files in the desktop with its
// shell's tools (stat, tr, sed, unzip, tar; pdftotext for PDFs), as
// command checks; an expected file is copied in after the agent.

func commandCheck(cmd string) check.Spec {
	zero := 0
	return check.Spec{Kind: check.CommandKind, Command: cmd, ExitCode: &zero}
}

// resultFile is a result that is a file of the desktop, as a shell word.
func resultFile(result *Getter) (string, string) {
	if result == nil || result.Type != "vm_file" {
		return "", "a result that is not a file of the desktop"
	}
	file := home(str(result.Path))
	if file == "" {
		return "", "a vm_file without a path"
	}
	return shellPath(file), ""
}

// imageFileSize: check_image_file_size, the file is smaller than the
// rule's max_size bytes.
func imageFileSize(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	file, why := resultFile(result)
	if why != "" {
		return nil, why
	}
	max, why := ruleValue(expected, "max_size")
	if why != "" {
		return nil, why
	}
	n, ok := max.(float64)
	if !ok || n != math.Trunc(n) || n < 0 || n > 1<<53 {
		return nil, "a max_size that is not a whole number"
	}
	return []check.Spec{commandCheck("s=$(stat -c %s " + file + `) && [ "$s" -lt ` + str(n) + " ]")}, ""
}

// blanksFolded is the shell words that print a file's text as
// compare_text_file's ignore_blanks reads it: tabs and line breaks as
// spaces, every run of blanks one space, none around it.
func blanksFolded(file string) string {
	return "tr '\\t\\n' '  ' < " + file + " | sed -E 's/[[:space:]]+/ /g; s/^ //; s/ $//'"
}

// compareTextFile: compare_text_file, the file's text equals the
// expected file's (a file to fetch); with ignore_blanks, blanks folded
// (a command check, the expected file copied in after the agent). Its
// ignore_case is not supported.
func compareTextFile(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	folded := false
	for k, v := range opts {
		if k == "ignore_blanks" {
			folded = v == true
			continue
		}
		return nil, "option " + k
	}
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file"
	}
	if !folded {
		asset, why := c.expectedFile(expected)
		if why != "" {
			return nil, why
		}
		return []check.Spec{{Kind: check.FileEqual, File: home(str(result.Path)), Asset: asset, Mode: "text"}}, ""
	}
	file, why := resultFile(result)
	if why != "" {
		return nil, why
	}
	want, why := c.inDesktop(expected)
	if why != "" {
		return nil, why
	}
	want = shellPath(want)
	return []check.Spec{commandCheck("[ -f " + file + " ] && [ -f " + want + ` ] && [ "$(` + blanksFolded(file) + `)" = "$(` + blanksFolded(want) + `)" ]`)}, ""
}

// unpack is the shell words that unpack an archive (by its name's
// ending, as Python's shutil.unpack_archive) into a folder.
func unpack(archive, name, dir string) (string, bool) {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".zip"):
		return "unzip -qq " + archive + " -d " + dir, true
	case strings.HasSuffix(n, ".tar.gz"), strings.HasSuffix(n, ".tgz"):
		return "tar -xzf " + archive + " -C " + dir, true
	case strings.HasSuffix(n, ".tar.bz2"), strings.HasSuffix(n, ".tbz2"):
		return "tar -xjf " + archive + " -C " + dir, true
	case strings.HasSuffix(n, ".tar.xz"), strings.HasSuffix(n, ".txz"):
		return "tar -xJf " + archive + " -C " + dir, true
	case strings.HasSuffix(n, ".tar"):
		return "tar -xf " + archive + " -C " + dir, true
	}
	return "", false
}

// compareArchive: compare_archive of PDFs, the archive (a file of the
// desktop) and the expected one (a file to fetch) unpack to the same
// names in the folder file_path (sorted as Python sorts them, by code
// point), and each pair of PDFs has the same text (compare_pdfs). An
// empty folder scores nothing (OSWorld divides by its count). Other
// file types are not supported.
func compareArchive(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	sub := ""
	for k, v := range opts {
		switch {
		case k == "file_path":
			sub = str(v)
		case k == "file_type" && v == "pdf":
		default:
			return nil, fmt.Sprintf("option %s: %v", k, v)
		}
	}
	if opts["file_type"] != "pdf" {
		return nil, "an archive of files that are not PDFs"
	}
	file, why := resultFile(result)
	if why != "" {
		return nil, why
	}
	want, why := c.inDesktop(expected)
	if why != "" {
		return nil, why
	}
	got, ok := unpack(file, str(result.Path), `"$d/p"`)
	if !ok {
		return nil, "an archive that is not a zip or tar file"
	}
	gold, ok := unpack(shellPath(want), want, `"$d/g"`)
	if !ok {
		return nil, "an expected archive that is not a zip or tar file"
	}
	p, g := `"$d/p"`, `"$d/g"`
	if sub != "" {
		if strings.Contains(sub, "..") || strings.HasPrefix(sub, "/") {
			return nil, "a file_path outside the archive"
		}
		p, g = `"$d/p"/`+shellQuote(sub), `"$d/g"/`+shellQuote(sub)
	}
	cmd := `d=$(mktemp -d) && trap 'rm -rf "$d"' EXIT && mkdir "$d/p" "$d/g" && ` + got + " && " + gold + " && " +
		"a=$(cd " + p + " && LC_ALL=C ls -A) && b=$(cd " + g + ` && LC_ALL=C ls -A) && [ -n "$a" ] && [ "$a" = "$b" ] && ` +
		`printf '%s\n' "$a" | while IFS= read -r f; do ` +
		"x=$(" + pdfText(p+`/"$f"`) + ") && y=$(" + pdfText(g+`/"$f"`) + ") && { " + trimmed("x") + "; " + trimmed("y") + `; [ "$x" = "$y" ]; } || exit 1; done`
	return []check.Spec{commandCheck(cmd)}, ""
}

func init() {
	metrics["check_image_file_size"] = imageFileSize
	metrics["compare_archive"] = compareArchive
	metrics["compare_text_file"] = compareTextFile
}

// imageSize: check_image_size without ignore_transparent, the picture
// (PNG, JPEG or BMP, read as image) has the rule's height and width,
// those given. OSWorld measures a picture whose format keeps one
// transparent colour (a PNG's tRNS) by its opaque part, and this reads
// it whole; ignore_transparent, the opaque part's size, is not supported.
func imageSize(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	if expected == nil || expected.Type != "rule" {
		return nil, "expected that is not a rule"
	}
	if v, ok := expected.Rules["ignore_transparent"]; ok && v != false {
		return nil, "ignore_transparent"
	}
	var parts []string
	for _, k := range []string{"height", "width"} {
		v, ok := expected.Rules[k]
		if !ok || v == nil {
			continue
		}
		n, isNum := v.(float64)
		if !isNum || n != math.Trunc(n) {
			return nil, "a " + k + " that is not a whole number"
		}
		parts = append(parts, "value."+k+" == "+str(n))
	}
	if len(parts) == 0 {
		return nil, "no height or width"
	}
	p.Read = "image"
	return []check.Spec{predicate(p, strings.Join(parts, " && "))}, ""
}

func init() { metrics["check_image_size"] = imageSize }
