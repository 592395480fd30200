package task

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// head is the start of a valid task, so that only the bomb is wrong.
const head = "id: bomb\ninstruction: x\nlevel: paper\nkind: state\nchecks: []\n"

// laughs is the "billion laughs" file: each of 9 anchors is a list of 9
// aliases of the one before, about 700 bytes that expand to 9^9 strings.
func laughs() string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(`x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	return b.String()
}

// mappingLaughs is the same with flow mappings, 8 keys a level.
func mappingLaughs() string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "m%d: &m%d {a: *m%d, b: *m%d, c: *m%d, d: *m%d, e: *m%d, f: *m%d, g: *m%d, h: *m%d}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}

// yamlBombs are files that expand far beyond their size, or nest deep
// enough to make the parser quadratic, each with the problem wanted:
// its position and message.
func yamlBombs() []struct {
	name, src, want string
} {
	const n = 100_000
	// block nests a line depth times, indenting each by step.
	block := func(line string, step, depth int) string {
		var b strings.Builder
		b.WriteString(head + "v:\n")
		for i := range depth {
			b.WriteString(strings.Repeat(" ", step*i+1) + line + "\n")
		}
		b.WriteString(strings.Repeat(" ", step*depth+1) + "end\n")
		return b.String()
	}
	return []struct{ name, src, want string }{
		{"alias laughs", laughs(), ":11:10: too many alias expansions (limit 100000 nodes)"},
		{"mapping laughs", mappingLaughs(), ":11:13: too many alias expansions (limit 100000 nodes)"},
		{"long text aliases", head + "s: &s \"" + strings.Repeat("ha", 2048) + "\"\nl: [" + strings.Repeat("*s,", 1000) + "*s]\n",
			":7:1535: too many alias expansions (limit 2097152 bytes of text)"},
		{"deep flow sequence", head + "v: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", ":6:67: nesting deeper than 64"},
		{"deep flow mapping", head + "v: " + strings.Repeat("{", n) + strings.Repeat("}", n) + "\n", ":6:67: nesting deeper than 64"},
		{"deep flow mapping with keys", head + "v: " + strings.Repeat("{a: ", n/2) + "1" + strings.Repeat("}", n/2) + "\n", ":6:256: nesting deeper than 64"},
		{"deep block sequence", head + "v:\n  " + strings.Repeat("- ", n) + "x\n", ":7:129: nesting deeper than 64"},
		{"deep explicit keys", head + "v:\n  " + strings.Repeat("? ", n) + "x\n", ":7:129: nesting deeper than 64"},
		{"deep block mapping", block("a:", 1, 500), ":70:65: nesting deeper than 64"},
		{"deep block sequence of mappings", block("- a:", 2, 400), ":38:66: nesting deeper than 64"},
		{"too large", head + "# " + strings.Repeat("x", MaxFileSize) + "\n", "larger than 524288 bytes"},
	}
}

// TestYAMLBombsRefused loads each bomb the ways the commands do: a task
// file (proctor tasks lint FILE), a suite directory (proctor run and
// proctor tasks lint DIR), a suite.yaml, and Parse. Each must be refused
// with its place, allocating under 100 MB where the unguarded loader
// reached gigabytes.
func TestYAMLBombsRefused(t *testing.T) {
	const budget = 100 << 20
	for _, tc := range yamlBombs() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "bomb.yaml")
			if err := os.WriteFile(file, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			suiteDir := filepath.Join(t.TempDir(), "suite")
			if err := os.Mkdir(suiteDir, 0o755); err != nil {
				t.Fatal(err)
			}
			// The bomb as suite.yaml.
			if err := os.WriteFile(filepath.Join(suiteDir, SuiteFile), []byte(strings.TrimPrefix(tc.src, head)), 0o644); err != nil {
				t.Fatal(err)
			}
			paths := []struct {
				name, file string
				load       func() Problems
			}{
				{"task file", file, func() Problems { _, ps := Load(file); return ps }},
				{"suite dir", file, func() Problems { _, ps := Load(dir); return ps }},
				{"suite.yaml", filepath.Join(suiteDir, SuiteFile), func() Problems { _, ps := Load(suiteDir); return ps }},
				{"Parse", "bomb.yaml", func() Problems { _, ps := Parse("bomb.yaml", []byte(tc.src)); return ps }},
			}
			for _, p := range paths {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				ps := p.load()
				took := time.Since(start)
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s: %v, %d MB allocated", p.name, took, alloc>>20)
				if alloc > budget {
					t.Errorf("%s: allocated %d MB, more than %d MB", p.name, alloc>>20, budget>>20)
				}
				var mine Problems
				for _, q := range ps {
					if q.File == p.file {
						mine = append(mine, q)
					}
				}
				if len(mine) != 1 {
					t.Fatalf("%s: got %d problems with %s, want 1: %v", p.name, len(mine), p.file, ps)
				}
				ps = mine
				got := ps[0].String()
				want := tc.want
				if p.name == "suite.yaml" && strings.HasPrefix(want, ":") {
					// Without the task's first five lines.
					want = shiftLine(want, -5)
				}
				if !strings.HasPrefix(got, p.file) || !strings.Contains(got, want) {
					t.Errorf("%s: problem %q, want %q after %s", p.name, got, want, p.file)
				}
			}
		})
	}
}

// shiftLine moves the line of a ":LINE:COL: message" by d.
func shiftLine(s string, d int) string {
	var line int
	var rest string
	if _, err := fmt.Sscanf(s, ":%d%s", &line, &rest); err != nil {
		return s
	}
	i := strings.Index(s[1:], ":") + 1
	return fmt.Sprintf(":%d%s", line+d, s[i:])
}

// TestYAMLLimitsAllowRealFiles makes sure that the limits leave room: a
// file at the depth limit with a few aliases still loads.
func TestYAMLLimitsAllowRealFiles(t *testing.T) {
	var b strings.Builder
	b.WriteString("id: deep\ninstruction: x\nlevel: paper\nkind: task\ngold: [{kind: done}]\n")
	b.WriteString("checks:\n  - &c {kind: exact, probe: {file: /tmp/a}, expected: \"a\"}\n  - *c\n")
	// The depth here is the top mapping, the tags list and its entries.
	b.WriteString("tags: [" + strings.Repeat("[", MaxDepth-2) + strings.Repeat("]", MaxDepth-2) + "]\n")
	_, ps := Parse("deep.yaml", []byte(b.String()))
	for _, p := range ps {
		if strings.Contains(p.Msg, "nesting") || strings.Contains(p.Msg, "alias") {
			t.Errorf("refused a file within the limits: %v", p)
		}
	}
	b.Reset()
	b.WriteString("id: deep\n")
	b.WriteString("tags: [" + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "]\n")
	_, ps = Parse("deeper.yaml", []byte(b.String()))
	if len(ps) != 1 || ps[0].String() != "deeper.yaml:2:70: nesting deeper than 64" {
		t.Errorf("one more level: got %v, want deeper.yaml:2:70: nesting deeper than 64", ps)
	}
}

// TestBadCharacters: a NUL or another control character is reported at
// its line and column, not as a JSON error without a place.
func TestBadCharacters(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{head + "note: \"a\x00b\"\n", "f.yaml:6:9: invalid character U+0000"},
		{head + "note: a\x00b\n", "f.yaml:6:8: invalid character U+0000"},
		{"id: x\x01\n", "f.yaml:1:6: invalid character U+0001"},
		{head + "# comment \x1b[31m\n", "f.yaml:6:11: invalid character U+001B"},
		{head + "note: é\x7f\n", "f.yaml:6:8: invalid character U+007F"},
		{head + "note: \xff\xfe\n", "f.yaml:6:7: invalid UTF-8"},
	}
	for _, tc := range tests {
		_, ps := Parse("f.yaml", []byte(tc.src))
		if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.src, ps, tc.want)
		}
	}
	// Tabs, line breaks and other Unicode stay allowed.
	src := "id: x\ninstruction: \"a\tb\"\r\ndescription: ünïcødé ✓ \u0085\nlevel: paper\nkind: task\nchecks: []\n"
	for _, p := range parseProblems(src) {
		if strings.Contains(p.Msg, "character") || strings.Contains(p.Msg, "UTF-8") || strings.Contains(p.Msg, "YAML") {
			t.Errorf("allowed characters refused: %v", p)
		}
	}
}

func parseProblems(src string) Problems {
	_, ps := Parse("f.yaml", []byte(src))
	return ps
}

// TestTemplateExpansionBounded: placeholders multiply a template's size;
// instances past MaxExpansion are refused before they are built.
func TestTemplateExpansionBounded(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	many := strings.Repeat("{{v}}", 20_000)
	tests := []struct {
		name, src string
	}{
		// One instance of 200 KB × 20,000 = 4 GB.
		{"long value in many placeholders", "id: t\ninstruction: \"" + many + "\"\nlevel: paper\nkind: task\nchecks: []\nparams:\n  v: [\"" + long + "\"]\n"},
		// 8,000 instances of 20 KB (and 3,000 placeholders each): 160 MB.
		{"many instances", "id: t-{{a}}-{{b}}-{{c}}\ninstruction: \"" + strings.Repeat("{{a}}{{b}}{{c}} ", 1000) + "\"\nlevel: paper\nkind: task\nchecks: []\nparams:\n" +
			"  a: [" + strings.TrimSuffix(strings.Repeat("aaaaaaaaaa,", 20), ",") + "]\n" +
			"  b: [" + strings.TrimSuffix(strings.Repeat("b,", 20), ",") + "]\n" +
			"  c: [" + strings.TrimSuffix(strings.Repeat("c,", 20), ",") + "]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, ps := Parse("t.yaml", []byte(tc.src))
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d MB allocated", alloc>>20)
			if alloc > 100<<20 {
				t.Errorf("allocated %d MB", alloc>>20)
			}
			if len(ps) != 1 || !strings.Contains(ps[0].String(), "params: the instances are larger than 33554432 bytes together") {
				t.Errorf("got %v, want the instances refused at params", ps)
			}
		})
	}
}

// TestCommentCutsText: a plain text that YAML ends at " #" is reported at
// the comment, with the text it kept; a comment begun with "# ", a
// quoted "#" and a "#" inside a word pass.
func TestCommentCutsText(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{head + "note: Who reported ticket #21?\n", `f.yaml:6:27: YAML ends the text "Who reported ticket" at " #" and reads "#21?" as a comment`},
		{head + "tags: [a, b]\nanswer:\n  - seat #4\n", `f.yaml:8:10: YAML ends the text "seat" at " #"`},
		{head + "note: a # a real comment\n", ""},
		{head + "note: \"ticket #21\"\n", ""},
		{head + "note: ticket#21\n", ""},
		{head + "#comment\nnote: x\n", ""},
		{head + "note: >\n  folded #3 text\n", ""},
	}
	for _, tc := range tests {
		var got string
		for _, p := range parseProblems(tc.src) {
			if strings.Contains(p.Msg, "comment") {
				got = p.String()
			}
		}
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.want)
		}
	}
}
