package usage

import "testing"

func TestPrices(t *testing.T) {
	p := Prices{"gpt-5*": {Input: 1, Output: 2}, "gpt-5-mini": {Input: 0.1, Output: 0.2}}
	if pr, _ := p.Lookup("gpt-5-mini"); pr.Input != 0.1 {
		t.Fatalf("exact name should win: %+v", pr)
	}
	if pr, _ := p.Lookup("gpt-5-2026"); pr.Input != 1 {
		t.Fatalf("prefix: %+v", pr)
	}
	if _, ok := p.Lookup("llama"); ok {
		t.Fatal("unknown model priced")
	}
	if u := p.Usage("gpt-5", 1_000_000, 500_000); u.Cost != 2 {
		t.Fatalf("cost %v", u.Cost)
	}
}

func TestAdd(t *testing.T) {
	got := Usage{InputTokens: 1, OutputTokens: 2, Cost: 0.5}.Add(Usage{InputTokens: 10, OutputTokens: 20, Cost: 0.25})
	if got != (Usage{InputTokens: 11, OutputTokens: 22, Cost: 0.75}) {
		t.Errorf("Add: %+v", got)
	}
}
