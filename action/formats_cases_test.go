package action

import (
	"errors"
	"strings"
	"testing"
)

// UI-TARS replies as its published prompts ask for them ("Thought: ...\n
// Action: ..."), for two classes: prose in the thought is never an action,
// and a reply with N actions gives N actions or an error that names the
// one not understood.

func TestParseUITARSThoughtIsNoAction(t *testing.T) {
	runParseCases(t, FormatUITARS, []parseCase{
		{name: "click prose", in: "Thought: Click the search field, then type the query.\nAction: click(start_box='(100,200)')",
			want: []string{"click (100,200)k"}},
		{name: "several prose lines", in: "Thought: Type the city name next.\nScroll down if the list is long.\nPress enter to submit.\nAction: type(content='Paris\\n')",
			want: []string{`type "Paris"`, "key enter"}},
		{name: "calls quoted in the thought", in: "Thought: I could click(start_box='(1,2)') or drag(start_box='(1,2)', end_box='(3,4)').\nAction: hotkey(key='ctrl c')",
			want: []string{"hotkey ctrl+c"}},
		{name: "thought mentions an action label", in: "Thought: The next Action: is a click on Save.\nAction: click(point='<point>5 6</point>')",
			want: []string{"click (5,6)k"}},
		{name: "reflection and summary", in: "Reflection: The last click missed the button.\nAction_Summary: Click the Save button.\nAction: click(start_box='(5,6)')",
			want: []string{"click (5,6)k"}},
		{name: "thought without action", in: "Thought: Click the search field, then type the query.", err: `line 1: "Thought: Click the search field, then type the query.": "Thought" is not a call`},
		{name: "bare prose", in: "Click the search field, then type the query.", err: `"Click" is not a call`},
		{name: "prose after the action", in: "Thought: Save it.\nAction: hotkey(key='ctrl s')\nClick Save again if nothing happens.", err: `line 3: "Click Save again if nothing happens.": "Click" is not a call`},
	})
}

func TestParseUITARSEveryAction(t *testing.T) {
	runParseCases(t, FormatUITARS, []parseCase{
		{name: "three after blank lines", in: "Thought: Fill in the form.\nAction: click(start_box='(1,2)')\n\ntype(content='abc')\n\nhotkey(key='enter')",
			want: []string{"click (1,2)k", `type "abc"`, "key enter"}},
		{name: "three on lines", in: "Action: left_double(start_box='(1,2)')\nright_single(start_box='(3,4)')\nscroll(start_box='(5,6)', direction='up')",
			want: []string{"click (1,2)k x2", "click (3,4)k right", "scroll (5,6)k dx=0 dy=-3"}},
		{name: "each with its label", in: "Thought: Two steps.\nAction: click(start_box='(1,2)')\n\nAction: type(content='abc')",
			want: []string{"click (1,2)k", `type "abc"`}},
		{name: "1.5 points", in: "Action: click(point='<point>10 20</point>')\n\ndrag(start_point='<point>1 2</point>', end_point='<point>3 4</point>')\n\nscroll(point='<point>7 8</point>', direction='down')",
			want: []string{"click (10,20)k", "drag (1,2)k to (3,4)k", "scroll (7,8)k dx=0 dy=3"}},
		{name: "scroll without a position", in: "Action: scroll(direction='down')", want: []string{"scroll dx=0 dy=3"}},
		{name: "finished after actions", in: "Action: type(content='It\\'s \\\"done\\\"')\n\nfinished(content='Saved as a\\nb')",
			want: []string{`type "It's \"done\""`, `answer "Saved as a\nb"`}},
		{name: "unknown second of three", in: "Thought: x\nAction: click(start_box='(1,2)')\n\nteleport(to='(3,4)')\n\ntype(content='a')",
			err: `line 4: "teleport(to='(3,4)')": unknown UI-TARS action teleport`},
		{name: "bad box third of three", in: "Action: click(start_box='(1,2)')\ntype(content='a')\nclick(start_box='(1)')",
			err: `line 3: "click(start_box='(1)')": start_box must hold a point (x,y) or a box (x1,y1,x2,y2), found 1 numbers`},
		{name: "bad direction first", in: "Action: scroll(start_box='(5,5)', direction='sideways')\n\nwait()", err: `line 1: "scroll(start_box='(5,5)', direction='sideways')": unknown scroll direction`},
		{name: "unclosed call", in: "Action: click(start_box='(1,2)')\n\ndrag(start_box='(1,2)'", err: "call to drag is not closed"},
		{name: "unclosed text", in: "Action: click(start_box='(1,2)')\n\ntype(content='abc", err: "string not closed"},
	})
	// The actions understood before the bad one come with the error.
	_, err := Parse(FormatUITARS, "Action: click(start_box='(1,2)')\n\nteleport()", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || len(pe.Actions) != 1 || pe.Actions[0].String() != "click (1,2)k" {
		t.Fatalf("error %v, want a *ParseError holding the click", err)
	}
}

// Defects the property tests found, one case each.
func TestParseRoundTripDefects(t *testing.T) {
	runParseCases(t, FormatUITARS, []parseCase{
		// scroll(point=...) lost its position: only start_box was read.
		{name: "scroll point", in: "Action: scroll(point='<point>961 821</point>', direction='right')", want: []string{"scroll (961,821)k dx=3 dy=0"}},
	})
	runParseCases(t, FormatProBench, []parseCase{
		// Every bracket at the ends was trimmed: TYPE [f(x)] typed "f(x".
		{name: "brackets in text", in: "TYPE [f(x)]\nTYPE [[1]]\nTYPE [<b>]\nTYPE (a)", want: []string{`type "f(x)"`, `type "[1]"`, `type "<b>"`, `type "a"`}},
	})
	runParseCases(t, FormatScreenAgent, []parseCase{
		// "\\_" in a JSON string (a backslash, then an underscore) lost a
		// backslash and became invalid JSON.
		{name: "escaped backslash before underscore", in: `{"action_type":"KeyboardAction","keyboard_action_type":"text","keyboard_text":"C:\\_tmp\\\\_x"}`,
			want: []string{`type "C:\\_tmp\\\\_x"`}},
		{name: "markdown underscore still undone", in: `{"action\_type":"KeyboardAction","keyboard\_action\_type":"text","keyboard\_text":"a\\_b"}`,
			want: []string{`type "a\\_b"`}},
	})
	runParseCases(t, FormatOpenAI, []parseCase{
		// The forward button was read as the back button.
		{name: "forward button", in: `{"type":"click","button":"forward","x":1,"y":2}`, err: `button "forward" has no action`},
		{name: "back button", in: `{"type":"click","button":"back","x":1,"y":2}`, want: []string{"back"}},
	})
}

func TestUnescapeUnderscores(t *testing.T) {
	for in, want := range map[string]string{
		`action\_type`:   `action_type`,
		`a\\_b`:          `a\\_b`,
		`a\\\_b`:         `a\\_b`,
		`\_\_`:           `__`,
		`no underscore\`: `no underscore\`,
		`x_y`:            `x_y`,
	} {
		if got := unescapeUnderscores(in); got != want {
			t.Errorf("unescapeUnderscores(%q) = %q, want %q", in, got, want)
		}
	}
	if s := strings.Repeat(`\\_`, 3); unescapeUnderscores(s) != s {
		t.Errorf("escaped backslashes changed: %q", unescapeUnderscores(s))
	}
}
