package action

import (
	"regexp"
	"strings"
)

// actionLineRE matches the lines of a reply that carry the actions rather
// than the reasoning: "Action: …" (UI-TARS, ReAct), and lines that are a
// special code (DONE, FAIL, WAIT n, ANS s) of their own.
var actionLineRE = regexp.MustCompile(`(?i)^\s*(?:action|actions)\s*:`)

// thoughtLabelRE is a leading "Thought:" label, which is dropped.
var thoughtLabelRE = regexp.MustCompile(`(?i)^\s*(?:thought|thoughts|reasoning)\s*:\s*`)

// Thought returns the reasoning of a text reply: the prose outside fenced
// code blocks, without "Action:" lines and lines that hold only a special
// code, and without a leading "Thought:" label. It is empty when the reply
// is only actions. It serves any text format; it is what a reviewer reads
// as the model's thought next to its parsed actions.
func Thought(reply string) string {
	prose := fenceRE.ReplaceAllString(reply, "\n")
	var keep []string
	for _, line := range strings.Split(prose, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if actionLineRE.MatchString(line) {
			continue
		}
		if _, ok := special(line); ok {
			continue
		}
		keep = append(keep, thoughtLabelRE.ReplaceAllString(line, ""))
	}
	out := strings.TrimSpace(strings.Join(keep, "\n"))
	// Runs of blank lines left where blocks were taken out become one.
	for strings.Contains(out, "\n\n\n") {
		out = strings.ReplaceAll(out, "\n\n\n", "\n\n")
	}
	return out
}
