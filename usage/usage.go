// Package usage is what a call of a model costs: tokens in and out and
// dollars (Usage), and the price list that turns tokens into dollars
// (Prices). Agents, judges, the store and the reports share it; it
// depends on nothing of the module.
package usage

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Usage is what a call (an agent's turn, a judge's verdict) cost.
type Usage struct {
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	Cost         float64 `json:"cost,omitempty"` // dollars
}

// Add sums two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens, Cost: u.Cost + v.Cost}
}

// Price is dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices maps model names to prices. A name matches a model exactly, or
// as a prefix ending in "*".
type Prices map[string]Price

// DefaultPrices are list prices of common computer-use models (SCUBA,
// appendix G); a price file given to the runner replaces them.
var DefaultPrices = Prices{
	"computer-use-preview*": {Input: 3, Output: 12},
	"claude-sonnet-4*":      {Input: 3, Output: 15},
	"claude-4-sonnet*":      {Input: 3, Output: 15},
	"gpt-5*":                {Input: 1.25, Output: 10},
	"o3*":                   {Input: 2, Output: 8},
	"gemini-2.5-pro*":       {Input: 1.25, Output: 10},
}

// LoadPrices reads a JSON price file: {"model": {"input": 3, "output": 15}}.
func LoadPrices(path string) (Prices, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Prices
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}

// Lookup finds a model's price; the longest matching entry wins.
func (p Prices) Lookup(model string) (Price, bool) {
	best, found, bestLen := Price{}, false, -1
	for name, price := range p {
		pattern, wild := strings.CutSuffix(name, "*")
		if name == model || wild && strings.HasPrefix(model, pattern) {
			if len(pattern) > bestLen {
				best, found, bestLen = price, true, len(pattern)
			}
		}
	}
	return best, found
}

// Usage prices a call's tokens; an unknown model costs 0.
func (p Prices) Usage(model string, in, out int) Usage {
	u := Usage{InputTokens: in, OutputTokens: out}
	if price, ok := p.Lookup(model); ok {
		u.Cost = (float64(in)*price.Input + float64(out)*price.Output) / 1e6
	}
	return u
}
