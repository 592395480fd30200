package action

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tName
	tNum
	tStr
	tOp
	tNewline
	tSpecial
)

type token struct {
	kind tokKind
	text string // name, operator, string value, or the special line
	num  float64
	line int
}

// pyLex splits Python source into tokens. Newlines inside brackets are
// ignored, as in Python; at the start of a statement, a line that is a
// special code becomes one tSpecial token.
func pyLex(src string) ([]token, error) {
	var toks []token
	line, depth := 1, 0
	atStmt := true
	i := 0
	for i < len(src) {
		c := src[i]
		if atStmt && depth == 0 {
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			text := src[i : i+end]
			if t := strings.TrimSpace(text); t != "" {
				if _, ok := special(t); ok {
					toks = append(toks, token{kind: tSpecial, text: t, line: line})
					i += end
					atStmt = false
					continue
				}
			}
		}
		switch {
		case c == '\n':
			line++
			if depth == 0 {
				toks = append(toks, token{kind: tNewline, line: line - 1})
				atStmt = true
			}
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i += 2
			if i < len(src) && src[i-1] == '\r' && src[i] == '\n' {
				i++
			}
			line++
			continue
		}
		atStmt = false
		switch {
		case c == '"' || c == '\'' || ((c == 'r' || c == 'R' || c == 'u' || c == 'U' || c == 'b' || c == 'B' || c == 'f' || c == 'F') && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '\'')):
			raw := false
			if c != '"' && c != '\'' {
				if c == 'f' || c == 'F' {
					return nil, fmt.Errorf("line %d: f-strings are not accepted: write the text literally", line)
				}
				raw = c == 'r' || c == 'R'
				i++
			}
			s, n, nl, err := lexString(src[i:], raw)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			toks = append(toks, token{kind: tStr, text: s, line: line})
			line += nl
			i += n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isDigit(src[j]) || src[j] == '.' || src[j] == '_' || src[j] == 'e' || src[j] == 'E' ||
				((src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			f, err := strconv.ParseFloat(strings.ReplaceAll(src[i:j], "_", ""), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: bad number %q", line, src[i:j])
			}
			toks = append(toks, token{kind: tNum, num: f, text: src[i:j], line: line})
			i = j
		case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || isDigit(src[j]) || src[j] < utf8.RuneSelf && unicode.IsLetter(rune(src[j]))) {
				j++
			}
			toks = append(toks, token{kind: tName, text: src[i:j], line: line})
			i = j
		case strings.IndexByte("()[]{},=.;+-*/:", c) >= 0:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			case ';':
				if depth == 0 {
					atStmt = true
				}
			}
			toks = append(toks, token{kind: tOp, text: string(c), line: line})
			i++
		default:
			r, _ := utf8.DecodeRuneInString(src[i:])
			return nil, fmt.Errorf("line %d: unexpected character %q", line, r)
		}
	}
	toks = append(toks, token{kind: tEOF, line: line})
	return toks, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// lexString reads a Python string literal at the start of s (which begins
// with a quote) and returns its value, its length and the newlines it spans.
func lexString(s string, raw bool) (string, int, int, error) {
	q := s[0]
	triple := len(s) >= 3 && s[1] == q && s[2] == q
	start := 1
	if triple {
		start = 3
	}
	var b strings.Builder
	nl := 0
	for i := start; i < len(s); {
		c := s[i]
		if triple && c == q && i+2 < len(s) && s[i+1] == q && s[i+2] == q {
			return b.String(), i + 3, nl, nil
		}
		if !triple && c == q {
			return b.String(), i + 1, nl, nil
		}
		if c == '\n' {
			if !triple {
				return "", 0, 0, fmt.Errorf("string not closed before the end of the line")
			}
			nl++
		}
		if c == '\\' && i+1 < len(s) {
			if raw {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i += 2
				continue
			}
			e := s[i+1]
			i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case '\n':
				nl++
			case '0':
				b.WriteByte(0)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n > len(s) {
					return "", 0, 0, fmt.Errorf("bad \\%c escape", e)
				}
				v, err := strconv.ParseUint(s[i:i+n], 16, 32)
				if err != nil || v > unicode.MaxRune {
					return "", 0, 0, fmt.Errorf("bad \\%c escape", e)
				}
				b.WriteRune(rune(v))
				i += n
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			continue
		}
		b.WriteByte(c)
		i++
	}
	return "", 0, 0, fmt.Errorf("string not closed")
}

type valKind int

const (
	vNum valKind = iota
	vStr
	vBool
	vNone
	vTag
	vSeq
)

type pyVal struct {
	kind  valKind
	num   float64
	str   string
	b     bool
	tag   int
	items []pyVal
}

func (v pyVal) describe() string {
	switch v.kind {
	case vNum:
		return "a number"
	case vStr:
		return "a string"
	case vBool:
		return "a boolean"
	case vNone:
		return "None"
	case vTag:
		return "a tag"
	default:
		return "a tuple or list"
	}
}

type pyParser struct {
	toks []token
	pos  int
}

func (p *pyParser) peek() token { return p.toks[p.pos] }
func (p *pyParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}
func (p *pyParser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == s
}

func describeTok(t token) string {
	switch t.kind {
	case tEOF:
		return "the end of the code"
	case tNewline:
		return "the end of the line"
	case tNum:
		return "number " + t.text
	case tStr:
		return "a string"
	case tSpecial:
		return strconv.Quote(t.text)
	default:
		return strconv.Quote(t.text)
	}
}

type pyCall struct {
	fn    string
	pos   []pyVal
	kw    map[string]pyVal
	line  int
	text  string
	order []string
}

func (p *pyParser) call() (pyCall, error) {
	t := p.next()
	if t.kind != tName {
		return pyCall{}, fmt.Errorf("expected a call such as pyautogui.click(x, y), found %s", describeTok(t))
	}
	name := t.text
	for p.isOp(".") {
		p.next()
		n := p.next()
		if n.kind != tName {
			return pyCall{}, fmt.Errorf("expected a name after %q", name+".")
		}
		name += "." + n.text
	}
	if !p.isOp("(") {
		if p.isOp("=") {
			return pyCall{}, fmt.Errorf("assignments are not accepted: each action is one call with literal arguments")
		}
		switch name {
		case "for", "while", "if", "def", "with", "try", "class", "lambda", "return":
			return pyCall{}, fmt.Errorf("%q statements are not accepted: write one call per action", name)
		}
		return pyCall{}, fmt.Errorf("%q is not a call", name)
	}
	p.next()
	c := pyCall{fn: name, kw: map[string]pyVal{}, line: t.line}
	for !p.isOp(")") {
		if p.peek().kind == tEOF {
			return c, fmt.Errorf("call to %s is not closed", name)
		}
		if p.peek().kind == tName && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == "=" {
			k := p.next().text
			p.next()
			v, err := p.expr(0)
			if err != nil {
				return c, err
			}
			if _, dup := c.kw[k]; dup {
				return c, fmt.Errorf("argument %s given twice", k)
			}
			c.kw[k] = v
			c.order = append(c.order, k)
		} else {
			if len(c.kw) > 0 {
				return c, fmt.Errorf("positional argument after a keyword argument")
			}
			v, err := p.expr(0)
			if err != nil {
				return c, err
			}
			c.pos = append(c.pos, v)
		}
		if p.isOp(",") {
			p.next()
			continue
		}
		if p.peek().kind == tEOF {
			return c, fmt.Errorf("call to %s is not closed", name)
		}
		if !p.isOp(")") {
			return c, fmt.Errorf("expected \",\" or \")\" in the call to %s, found %s", name, describeTok(p.peek()))
		}
	}
	p.next()
	return c, nil
}

const maxExprDepth = 64

func (p *pyParser) expr(depth int) (pyVal, error) {
	if depth > maxExprDepth {
		return pyVal{}, fmt.Errorf("expression nested too deeply")
	}
	l, err := p.term(depth)
	if err != nil {
		return l, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().text
		r, err := p.term(depth)
		if err != nil {
			return l, err
		}
		if l, err = arith(op, l, r); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (p *pyParser) term(depth int) (pyVal, error) {
	l, err := p.unary(depth)
	if err != nil {
		return l, err
	}
	for p.isOp("*") || p.isOp("/") {
		op := p.next().text
		if op == "/" && p.isOp("/") { // floor division
			p.next()
			op = "//"
		}
		r, err := p.unary(depth)
		if err != nil {
			return l, err
		}
		if l, err = arith(op, l, r); err != nil {
			return l, err
		}
	}
	return l, nil
}

func arith(op string, l, r pyVal) (pyVal, error) {
	if op == "+" && l.kind == vStr && r.kind == vStr {
		return pyVal{kind: vStr, str: l.str + r.str}, nil
	}
	if l.kind != vNum || r.kind != vNum {
		return pyVal{}, fmt.Errorf("cannot apply %s to %s and %s", op, l.describe(), r.describe())
	}
	switch op {
	case "+":
		l.num += r.num
	case "-":
		l.num -= r.num
	case "*":
		l.num *= r.num
	case "/", "//":
		if r.num == 0 {
			return pyVal{}, fmt.Errorf("division by zero")
		}
		l.num /= r.num
		if op == "//" {
			l.num = math.Floor(l.num)
		}
	}
	return l, nil
}

func (p *pyParser) unary(depth int) (pyVal, error) {
	if p.isOp("-") || p.isOp("+") {
		neg := p.next().text == "-"
		v, err := p.unary(depth + 1)
		if err != nil {
			return v, err
		}
		if v.kind != vNum {
			return v, fmt.Errorf("cannot negate %s", v.describe())
		}
		if neg {
			v.num = -v.num
		}
		return v, nil
	}
	return p.atom(depth)
}

func (p *pyParser) atom(depth int) (pyVal, error) {
	t := p.next()
	switch t.kind {
	case tNum:
		return pyVal{kind: vNum, num: t.num}, nil
	case tStr:
		s := t.text
		for p.peek().kind == tStr { // implicit concatenation
			s += p.next().text
		}
		return pyVal{kind: vStr, str: s}, nil
	case tName:
		switch t.text {
		case "True", "False":
			return pyVal{kind: vBool, b: t.text == "True"}, nil
		case "None":
			return pyVal{kind: vNone}, nil
		}
		if n, ok := strings.CutPrefix(t.text, "tag_"); ok {
			if k, err := strconv.Atoi(n); err == nil && k > 0 {
				return pyVal{kind: vTag, tag: k}, nil
			}
		}
		if p.isOp("(") || p.isOp(".") {
			return pyVal{}, fmt.Errorf("nested calls such as %s(...) are not accepted: arguments must be literals", t.text)
		}
		return pyVal{}, fmt.Errorf("unknown name %q: arguments must be literals or tag_N", t.text)
	case tOp:
		if t.text == "(" || t.text == "[" {
			closer := map[string]string{"(": ")", "[": "]"}[t.text]
			var items []pyVal
			for !p.isOp(closer) {
				if p.peek().kind == tEOF {
					return pyVal{}, fmt.Errorf("%q is not closed", t.text)
				}
				v, err := p.expr(depth + 1)
				if err != nil {
					return v, err
				}
				items = append(items, v)
				if p.isOp(",") {
					p.next()
					continue
				}
				if !p.isOp(closer) {
					return pyVal{}, fmt.Errorf("expected \",\" or %q, found %s", closer, describeTok(p.peek()))
				}
			}
			p.next()
			if t.text == "(" && len(items) == 1 && p.toks[p.pos-2].text != "," {
				return items[0], nil // parenthesised expression
			}
			return pyVal{kind: vSeq, items: items}, nil
		}
	}
	return pyVal{}, fmt.Errorf("unexpected %s", describeTok(t))
}

// argument access with pyautogui's positional order.
type pyArgs struct {
	c    pyCall
	used map[string]bool
}

func (a *pyArgs) get(i int, name string) (pyVal, bool) {
	a.used[name] = true
	if v, ok := a.c.kw[name]; ok {
		return v, true
	}
	if i >= 0 && i < len(a.c.pos) {
		return a.c.pos[i], true
	}
	return pyVal{}, false
}

func (a *pyArgs) num(i int, name string) (float64, bool, error) {
	v, ok := a.get(i, name)
	if !ok || v.kind == vNone {
		return 0, false, nil
	}
	if v.kind != vNum {
		return 0, false, fmt.Errorf("%s must be a number, not %s", name, v.describe())
	}
	return v.num, true, nil
}

func (a *pyArgs) str(i int, name string) (string, bool, error) {
	v, ok := a.get(i, name)
	if !ok || v.kind == vNone {
		return "", false, nil
	}
	if v.kind != vStr {
		return "", false, fmt.Errorf("%s must be a string, not %s", name, v.describe())
	}
	return v.str, true, nil
}

func (a *pyArgs) unknown(maxPos int) error {
	if len(a.c.pos) > maxPos {
		return fmt.Errorf("%s takes at most %d positional arguments, got %d", a.c.fn, maxPos, len(a.c.pos))
	}
	for _, k := range a.c.order {
		if !a.used[k] {
			return fmt.Errorf("%s has no argument %q", a.c.fn, k)
		}
	}
	return nil
}
