package task

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Limits on a YAML file (a task, a template or suite.yaml), checked before
// anything expands it. The largest real task file is about 6 KB with a
// nesting depth under 10 and no aliases, so these leave ample room.
const (
	// MaxFileSize bounds a file's bytes. The YAML lexer allocates about
	// 300 bytes per input byte at worst, so this also bounds the lexing.
	MaxFileSize = 512 << 10
	// MaxDepth bounds how deeply collections nest. goccy/go-yaml's parser
	// takes time and memory quadratic in the depth (100,000 levels cost
	// over 10 GB), and the decoders recurse; its own limit (10,000, in the
	// decoder only) comes too late.
	MaxDepth = 64
	// MaxNodes bounds the nodes of the document with every alias
	// expanded, and MaxText the bytes of its scalars: a few anchors that
	// each repeat the one before ("billion laughs") fit in 700 bytes and
	// expand to billions of nodes in the decoder and the JSON conversion.
	MaxNodes = 100_000
	MaxText  = 4 * MaxFileSize
)

var errTooLarge = fmt.Errorf("the file is larger than %d bytes, the limit for a YAML file here", MaxFileSize)

// readLimited reads a file, refusing one over MaxFileSize without reading
// the rest of it.
func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, errTooLarge
	}
	return b, nil
}

// parseYAML parses src after checking it against the limits above; every
// path that decodes a file parses it here first. goccy/go-yaml has no
// option for depth or alias expansion, so the checks are made on its
// tokens (depth, before the parser's quadratic cost) and on the parsed
// tree, in which aliases are not yet expanded (expansion counts, with the
// size of each anchor computed once).
func parseYAML(name string, src []byte) (*ast.File, *Problem) {
	at := func(line, col int, format string, args ...any) *Problem {
		return &Problem{File: name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	if len(src) > MaxFileSize {
		return nil, at(0, 0, "%s", errTooLarge)
	}
	if line, col, r, ok := badChar(src); !ok {
		if r == utf8.RuneError {
			return nil, at(line, col, "invalid UTF-8: YAML files are Unicode text")
		}
		return nil, at(line, col, "invalid character %U: control characters other than tab and line breaks are not allowed in YAML", r)
	}
	toks := lexer.Tokenize(string(src))
	if tk := tooDeep(toks); tk != nil {
		return nil, at(tk.Position.Line, tk.Position.Column, "nesting deeper than %d", MaxDepth)
	}
	if tk, cut := cutText(toks); tk != nil {
		return nil, at(tk.Position.Line, tk.Position.Column, "YAML ends the text %q at \" #\" and reads \"#%s\" as a comment: quote the whole text, or begin a comment with \"# \"", strings.TrimSpace(cut.Value), strings.TrimRight(tk.Value, "\r\n"))
	}
	f, err := parser.Parse(toks, 0)
	if err != nil {
		p := yamlProblem(name, err)
		return nil, &p
	}
	for _, d := range f.Docs {
		e := expansion{anchors: map[string]size{}}
		e.walk(d.Body, 0)
		if e.err != nil {
			return nil, at(e.err.line, e.err.col, "%s", e.err.msg)
		}
	}
	return f, nil
}

// cutText finds a comment that most likely cut a text: one that follows a
// plain scalar on its line and starts with no space after its "#", as in
// `question: Who reported ticket #21?` (YAML reads "Who reported ticket").
// It returns the comment and the scalar, or nil. A comment written as
// "# ..." passes.
func cutText(toks token.Tokens) (comment, text *token.Token) {
	for i, tk := range toks {
		if tk.Type != token.CommentType || i == 0 || tk.Value == "" || unicode.IsSpace(rune(tk.Value[0])) {
			continue
		}
		prev := toks[i-1]
		if prev.Type == token.StringType && prev.Position.Line == tk.Position.Line {
			return tk, prev
		}
	}
	return nil, nil
}

// badChar finds the first character that YAML does not allow (the C0
// control characters but tab, LF and CR; DEL; C1 but NEL; surrogates,
// U+FFFE and U+FFFF) or the first invalid UTF-8; it reports ok when there
// is none. The JSON conversion otherwise fails on them with no position.
func badChar(src []byte) (line, col int, r rune, ok bool) {
	line, col = 1, 1
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		bad := r == utf8.RuneError && n <= 1 ||
			r < 0x20 && r != '\t' && r != '\n' && r != '\r' ||
			r == 0x7f || r >= 0x80 && r <= 0x9f && r != 0x85 ||
			r == 0xfffe || r == 0xffff
		if bad {
			return line, col, r, false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return 0, 0, 0, true
}

// tooDeep returns the first token at which collections nest deeper than
// MaxDepth, or nil. Flow collections count their brackets. A block
// collection is open from its first entry (a "-", a "?" or a key) to the
// next entry at a lesser column: the open ones form a stack of increasing
// columns, plus a sequence that shares its parent key's column, as YAML
// allows. Depth is the stack's height plus the open brackets.
func tooDeep(toks token.Tokens) *token.Token {
	type open struct {
		col int
		seq bool
	}
	var stack []open
	flow := 0
	for _, tk := range toks {
		var col int
		var seq bool
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
			if len(stack)+flow > MaxDepth {
				return tk
			}
			continue
		case token.SequenceEndType, token.MappingEndType:
			if flow > 0 {
				flow--
			}
			continue
		case token.DocumentHeaderType, token.DocumentEndType:
			stack, flow = stack[:0], 0
			continue
		case token.SequenceEntryType:
			col, seq = tk.Position.Column, true
		case token.MappingKeyType:
			col = tk.Position.Column
		case token.MappingValueType:
			k := tk.Prev
			for k != nil && k.Type == token.CommentType {
				k = k.Prev
			}
			if k == nil || k.Position.Line != tk.Position.Line {
				continue // the value of an explicit "? key"
			}
			col, tk = k.Position.Column, k // the key marks the place
		default:
			continue
		}
		if flow > 0 {
			continue
		}
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.col > col || top.col == col && top.seq && !seq {
				stack = stack[:len(stack)-1]
				continue
			}
			break
		}
		if n := len(stack); n > 0 && stack[n-1].col == col && stack[n-1].seq == seq {
			continue // another entry of the same collection
		}
		stack = append(stack, open{col, seq})
		if len(stack) > MaxDepth {
			return tk
		}
	}
	return nil
}

// size is how big a node is with its aliases expanded.
type size struct{ nodes, text int }

type expansionError struct {
	line, col int
	msg       string
}

// expansion measures a document with its aliases expanded. An alias takes
// the size of the anchor last defined before it, as the decoder resolves
// it, so each anchor is measured once and the walk is linear in the tree.
type expansion struct {
	anchors map[string]size
	total   size
	err     *expansionError
}

func (e *expansion) fail(tk *token.Token, format string, args ...any) {
	if e.err == nil {
		e.err = &expansionError{msg: fmt.Sprintf(format, args...)}
		if tk != nil {
			e.err.line, e.err.col = tk.Position.Line, tk.Position.Column
		}
	}
}

// add counts s into the document's total and fails once a limit is
// passed; what names what was added, for the message.
func (e *expansion) add(tk *token.Token, s size, what string) {
	e.total = plus(e.total, s)
	switch {
	case e.total.nodes > MaxNodes:
		e.fail(tk, "too many %s (limit %d nodes)", what, MaxNodes)
	case e.total.text > MaxText:
		e.fail(tk, "too many %s (limit %d bytes of text)", what, MaxText)
	}
}

// walk returns the expanded size of n, depth collections deep, and adds
// the nodes it visits to the total, an alias with its anchor's whole size.
// The total stays within twice the limits, so sizes cannot overflow.
func (e *expansion) walk(n ast.Node, depth int) size {
	if n == nil || e.err != nil {
		return size{}
	}
	switch x := n.(type) {
	case *ast.AliasNode:
		a, ok := size{}, false
		if x.Value != nil && x.Value.GetToken() != nil {
			a, ok = e.anchors[x.Value.GetToken().Value]
		}
		if !ok {
			a = size{nodes: 1} // unknown or self-referring: the decoder gives null or an error
		}
		e.add(x.GetToken(), a, "alias expansions")
		return a
	case *ast.AnchorNode:
		s := e.walk(x.Value, depth)
		if x.Name != nil && x.Name.GetToken() != nil {
			e.anchors[x.Name.GetToken().Value] = s
		}
		return s
	case *ast.TagNode:
		return e.walk(x.Value, depth)
	case *ast.MappingKeyNode:
		return e.walk(x.Value, depth)
	case *ast.MappingValueNode:
		return plus(e.walk(x.Key, depth), e.walk(x.Value, depth))
	case *ast.CommentGroupNode, *ast.CommentNode, *ast.DirectiveNode:
		return size{}
	case *ast.MappingNode, *ast.SequenceNode:
		if depth >= MaxDepth {
			// The token check should have caught this; the parser's own
			// idea of nesting is checked too, so that this recursion and
			// the decoders' stay bounded whatever the lexer saw.
			e.fail(n.GetToken(), "nesting deeper than %d", MaxDepth)
			return size{}
		}
		s := size{nodes: 1}
		e.add(n.GetToken(), s, "nodes")
		var kids []ast.Node
		if m, ok := x.(*ast.MappingNode); ok {
			for _, v := range m.Values {
				kids = append(kids, v)
			}
		} else {
			kids = x.(*ast.SequenceNode).Values
		}
		for _, k := range kids {
			s = plus(s, e.walk(k, depth+1))
		}
		return s
	}
	s := size{nodes: 1}
	if tk := n.GetToken(); tk != nil {
		s.text = len(tk.Value)
	}
	if l, ok := n.(*ast.LiteralNode); ok && l.Value != nil {
		s.text = len(l.Value.Value)
	}
	e.add(n.GetToken(), s, "nodes")
	return s
}

func plus(a, b size) size { return size{a.nodes + b.nodes, a.text + b.text} }
