package main

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// TestDocsLinks follows every relative link of the README and the pages
// under docs/: each must lead to a file of the repository, and a #anchor
// to a heading of that file (as GitHub names headings).
func TestDocsLinks(t *testing.T) {
	files := readmeFiles(t)
	if len(files) < 2 {
		t.Fatalf("the docs are %v; the pages under docs/ are missing", files)
	}
	problems, n := checkDocLinks("../..", files)
	for _, p := range problems {
		t.Error(p)
	}
	if n < len(files) {
		t.Fatalf("%d relative links in %d files; the extraction misses some", n, len(files))
	}
}

// TestCheckDocLinks: a link to a missing file, to a missing heading, or
// out of the repository is a problem; a link to a heading, to a file, to
// the file's own heading or to the web is not, and text in code is no
// link.
func TestCheckDocLinks(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"README.md": "# Proctor\n\n## The docs\n\n- [Tasks](docs/tasks.md#the-format-of-a-task)\n" +
			"- [Gone](docs/gone.md) and [web](https://example.com/x.md#y)\n" +
			"- [Here](#the-docs), [code](cmd/proctor/main.go), `[not](a-link.md)`\n",
		"docs/tasks.md": "# Tasks\n\n[Proctor](../README.md) · [the docs](../README.md#the-doc)\n\n" +
			"## The format of a task\n\n## The format of a task\n\nSee [the second](#the-format-of-a-task-1), [out](../../x.md)\n" +
			"and [a step](#setup-steps-launch-run).\n\n### Setup steps: `launch`, `run`\n\n```\n[in a fence](nowhere.md)\n```\n",
		"cmd/proctor/main.go": "package main\n",
	})
	got, n := checkDocLinks(root, []string{"README.md", "docs/tasks.md"})
	want := []string{
		"README.md:6: [Gone](docs/gone.md) leads to docs/gone.md, which does not exist",
		"docs/tasks.md:3: [the docs](../README.md#the-doc) leads to README.md, which has no heading #the-doc",
		"docs/tasks.md:9: [out](../../x.md) leads out of the repository",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n != 9 {
		t.Errorf("%d relative links, want 9", n)
	}
}

func TestHeadingAnchor(t *testing.T) {
	for _, tc := range []struct{ heading, anchor string }{
		{"Task format", "task-format"},
		{"The built-in suite", "the-built-in-suite"},
		{"Desktops and the guest daemon", "desktops-and-the-guest-daemon"},
		{"Applications, services and suite.yaml", "applications-services-and-suiteyaml"},
		{"Local desktops (X11)", "local-desktops-x11"},
		{"snake_case and Ünïcode", "snake_case-and-ünïcode"},
	} {
		if got := headingAnchor(tc.heading); got != tc.anchor {
			t.Errorf("headingAnchor(%q) = %q, want %q", tc.heading, got, tc.anchor)
		}
	}
}

// checkDocLinks follows the relative links of files (slash-separated
// paths under root) and says what each broken one is, FILE:LINE first; n
// is the number of relative links followed.
func checkDocLinks(root string, files []string) (problems []string, n int) {
	anchors := map[string]map[string]bool{} // by file, read once
	parsed := func(file string) (map[string]bool, []docLink, error) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, nil, err
		}
		a, links := parseDoc(src)
		anchors[file] = a
		return a, links, nil
	}
	for _, file := range files {
		_, links, err := parsed(file)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range links {
			u, err := url.Parse(l.dest)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: [%s](%s): %v", file, l.line, l.text, l.dest, err))
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // the web, or mail
			}
			n++
			target := file
			if u.Path != "" {
				target = path.Join(path.Dir(file), u.Path)
			}
			at := fmt.Sprintf("%s:%d: [%s](%s)", file, l.line, l.text, l.dest)
			if target == ".." || strings.HasPrefix(target, "../") {
				problems = append(problems, at+" leads out of the repository")
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				problems = append(problems, fmt.Sprintf("%s leads to %s, which does not exist", at, target))
				continue
			}
			if u.Fragment == "" {
				continue
			}
			a, ok := anchors[target]
			if !ok {
				if !strings.HasSuffix(target, ".md") {
					problems = append(problems, fmt.Sprintf("%s names an anchor in %s, which is no Markdown file", at, target))
					continue
				}
				if a, _, err = parsed(target); err != nil {
					problems = append(problems, err.Error())
					continue
				}
			}
			if !a[u.Fragment] {
				problems = append(problems, fmt.Sprintf("%s leads to %s, which has no heading #%s", at, target, u.Fragment))
			}
		}
	}
	return problems, n
}

// docLink is a link of a Markdown file.
type docLink struct {
	text, dest string
	line       int
}

// parseDoc reads a Markdown file's headings, as the anchors GitHub gives
// them, and its links (images included); text in code is neither.
func parseDoc(src []byte) (anchors map[string]bool, links []docLink) {
	doc := goldmark.DefaultParser().Parse(text.NewReader(src))
	anchors = map[string]bool{}
	seen := map[string]int{}
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			a := headingAnchor(plainText(n, src))
			if k := seen[a]; k > 0 {
				seen[a]++
				a = fmt.Sprintf("%s-%d", a, k)
			} else {
				seen[a] = 1
			}
			anchors[a] = true
		case *ast.Link:
			links = append(links, docLink{text: plainText(n, src), dest: string(n.Destination), line: lineOf(n, src)})
		case *ast.Image:
			links = append(links, docLink{text: plainText(n, src), dest: string(n.Destination), line: lineOf(n, src)})
		}
		return ast.WalkContinue, nil
	})
	return anchors, links
}

// plainText is the text of an inline node's descendants, code included.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// lineOf is the line (from 1) where an inline node's text begins, or else
// where its block begins.
func lineOf(n ast.Node, src []byte) int {
	offset := -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			offset = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for p := n; offset < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			offset = p.Lines().At(0).Start
		}
	}
	if offset < 0 {
		return 0
	}
	return 1 + strings.Count(string(src[:offset]), "\n")
}

// headingAnchor is the anchor GitHub gives a heading: its text in lower
// case, spaces made hyphens, and every character that is not a letter, a
// mark, a digit, a hyphen or an underscore left out.
func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
