package action

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Format names an agent output format that Proctor can parse.
type Format string

// The supported output formats.
const (
	FormatPyAutoGUI   Format = "pyautogui"   // pyautogui code blocks plus DONE, FAIL, WAIT n, ANS s
	FormatScreenAgent Format = "screenagent" // ScreenAgent's JSON function calls
	FormatOSAtlas     Format = "osatlas"     // CLICK <point>[[x,y]]</point>, TYPE [..], SCROLL [UP]
	FormatUITARS      Format = "uitars"      // click(start_box='(x,y)'), type(content=...), finished()
	FormatAnthropic   Format = "anthropic"   // the computer-use tool's input object
	FormatOpenAI      Format = "openai"      // a computer_call item or its action object
	FormatBrowserUse  Format = "browser-use" // browser-use JSON actions
	FormatProBench    Format = "probench"    // CLICK, SWIPE, TYPE, ENTER, BACK, COMPLETE, WAIT
	FormatJSON        Format = "json"        // Proctor's own Action objects in JSON
)

// Options tunes a parser.
type Options struct {
	// Unit is the convention of bare coordinates in the reply. Empty means
	// the format's own default: thousandths for OS-Atlas and UI-TARS,
	// pixels for the rest.
	Unit Unit
}

// Parser turns one model reply into actions.
type Parser func(reply string, o Options) ([]Action, error)

var parsers = map[Format]Parser{
	FormatPyAutoGUI:   ParsePyAutoGUI,
	FormatScreenAgent: ParseScreenAgent,
	FormatOSAtlas:     ParseOSAtlas,
	FormatUITARS:      ParseUITARS,
	FormatAnthropic:   ParseAnthropic,
	FormatOpenAI:      ParseOpenAI,
	FormatBrowserUse:  ParseBrowserUse,
	FormatProBench:    ParseProBench,
	FormatJSON:        ParseJSON,
}

// Formats lists the supported formats, sorted.
func Formats() []Format {
	out := make([]Format, 0, len(parsers))
	for f := range parsers {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Parse parses reply in the given format. Every returned action is valid.
func Parse(f Format, reply string, o Options) ([]Action, error) {
	p, ok := parsers[f]
	if !ok {
		return nil, fmt.Errorf("unknown output format %q (known: %v)", f, Formats())
	}
	acts, err := p(reply, o)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && len(pe.Actions) > 0 {
			pe.Actions, _ = validOnly(pe.Actions)
		}
		return nil, err
	}
	if good, bad := validOnly(acts); bad >= 0 {
		a := acts[bad]
		return nil, &ParseError{Format: f, Part: a.String(), Reason: fmt.Sprintf("action %d: %v", bad+1, a.Validate()), Actions: good}
	}
	return acts, nil
}

// validOnly returns the valid actions of acts and the index of the first
// invalid one, or -1.
func validOnly(acts []Action) ([]Action, int) {
	first := -1
	good := make([]Action, 0, len(acts))
	for i, a := range acts {
		if a.Validate() != nil {
			if first < 0 {
				first = i
			}
			continue
		}
		good = append(good, a)
	}
	return good, first
}

// ParseError says which part of a reply was rejected and why. Parse returns
// no actions with an error; when only part of a reply was rejected (one bad
// object among several), Actions holds the valid actions understood in the
// rest of it, in order, for callers that want to report or use them.
type ParseError struct {
	Format  Format
	Line    int    // 1-based line in the reply or code block, 0 when unknown
	Part    string // the rejected text, shortened
	Reason  string
	Actions []Action // the actions understood elsewhere in the reply, if any
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Format))
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Part != "" {
		fmt.Fprintf(&b, ": %s", strconv.Quote(shorten(e.Part, 80)))
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// codeBlock is one fenced block of a reply.
type codeBlock struct {
	lang string
	body string
}

var fenceRE = regexp.MustCompile("(?s)```([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```")

// codeBlocks returns the fenced blocks of reply, in order.
func codeBlocks(reply string) []codeBlock {
	var out []codeBlock
	for _, m := range fenceRE.FindAllStringSubmatch(reply, -1) {
		lang, body := m[1], m[2]
		// "```DONE```" has no newline: the word is the body, not a language;
		// so is "```ANS 42```" or "```WAIT 3```", a special code with its
		// argument.
		if !strings.Contains(m[0], "\n") {
			if body == "" {
				lang, body = "", m[1]
			} else if joined := m[1] + " " + body; m[1] != "" {
				if _, ok := special(joined); ok {
					lang, body = "", joined
				}
			}
		}
		out = append(out, codeBlock{lang: strings.ToLower(lang), body: body})
	}
	return out
}

var specialRE = regexp.MustCompile(`^(?:'''|"""|'|"|` + "`" + `)?\s*(DONE|FAIL|WAIT(?:\s*\[?\s*([0-9]+(?:\.[0-9]+)?)\s*\]?)?|ANS(?:\s+(.*?))?)\s*(?:'''|"""|'|"|` + "`" + `)?\s*;?$`)

// special parses one of the special codes DONE, FAIL, WAIT [n], ANS s.
func special(line string) (Action, bool) {
	line = strings.TrimSpace(line)
	m := specialRE.FindStringSubmatch(line)
	if m == nil {
		return Action{}, false
	}
	switch {
	case m[1] == "DONE":
		return Action{Kind: Done}, true
	case m[1] == "FAIL":
		return Action{Kind: Fail}, true
	case strings.HasPrefix(m[1], "WAIT"):
		a := Action{Kind: Wait, Duration: DefaultWait}
		if m[2] != "" {
			d, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				return Action{}, false
			}
			a.Duration = d
		}
		return a, true
	default: // ANS
		ans := strings.TrimSpace(m[3])
		if ans == "" {
			return Action{}, false
		}
		if ans == "FAIL" {
			return Action{Kind: Fail}, true
		}
		return Action{Kind: Answer, Text: ans}, true
	}
}

func unitOr(o Options, def Unit) Unit {
	if o.Unit != "" {
		return o.Unit
	}
	return def
}
