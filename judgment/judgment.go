// Package judgment is what a judge is asked (a Request: an expectation,
// criteria and evidence) and what it decides (a Verdict), and the Model
// that decides: the checks ask through it, package judge answers. It
// depends on nothing of the module but package usage.
package judgment

import (
	"context"

	"github.com/proctor-eval/proctor/usage"
)

// Criterion is one part of the expectation, worth Weight of the score.
type Criterion struct {
	ID     string  `json:"id"`     // unique in the request; the model answers by it
	Weight float64 `json:"weight"` // relative weight; 0 counts as 1, negative is invalid
	Text   string  `json:"text"`   // what must hold
}

// Part is one piece of evidence: text or an image, each with a label
// that tells the model what it is ("the agent's answer", "final screen").
// Make them with Text and Image.
type Part struct {
	Label  string `json:"label"`
	Text   string `json:"text,omitempty"`
	Image  []byte `json:"-"`
	Format string `json:"format,omitempty"` // of the image: "png" or "jpeg"
}

// Text is a text part.
func Text(label, text string) Part { return Part{Label: label, Text: text} }

// Image is an image part; format is "png" or "jpeg" ("jpg" is taken as
// "jpeg"; empty: sniffed from the bytes).
func Image(label, format string, data []byte) Part {
	return Part{Label: label, Image: data, Format: format}
}

// IsImage tells an image part from a text part.
func (p Part) IsImage() bool { return p.Image != nil }

// Request is what a judge is asked.
type Request struct {
	Expectation string      // what must hold, in natural language
	Criteria    []Criterion // optional, for partial credit; Pass needs every one
	Evidence    []Part      // what the judge sees
}

// CriterionVerdict is the judge's decision on one criterion.
type CriterionVerdict struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// Verdict is a judge's decision.
type Verdict struct {
	Pass bool `json:"pass"`
	// Score is the passed criteria's weights over the total; without
	// criteria, 1 for a pass and 0 for a fail.
	Score    float64            `json:"score"`
	Reason   string             `json:"reason"`
	Criteria []CriterionVerdict `json:"criteria,omitempty"` // in the request's order
	Model    string             `json:"model"`              // as the API named it (the configured name if it did not)
	// Usage is what this call spent over all its asks (the re-asks of
	// malformed replies included); zero for a verdict from the cache.
	Usage  usage.Usage `json:"usage"`
	Cached bool        `json:"cached,omitempty"` // from the cache: no model was asked
	// Votes are a panel's individual verdicts, in its judges' order.
	Votes []Verdict `json:"votes,omitempty"`
}

// Model is what decides a request: a Client (one model) or a Panel
// (several, by majority).
type Model interface {
	Judge(ctx context.Context, req Request) (Verdict, error)
	// Name names the judge in reports: "provider:model", or a panel's
	// names joined by "+".
	Name() string
}
