package check

import (
	"context"
	"testing"
)

func BenchmarkEvaluate(b *testing.B) {
	ev := evidence(b)
	specs := map[string]Spec{
		"exact":     {Kind: Exact, Probe: &Probe{File: "/root/notes.txt"}, Expected: "hello world"},
		"answer":    {Kind: AnswerKind, Accepted: []string{"13", "The answer is 12"}},
		"lines":     {Kind: Lines, Probe: &Probe{File: "/root/list.txt"}, Expected: []any{"alpha", "beta"}},
		"predicate": {Kind: Predicate, Probe: &Probe{File: "/root/state.json"}, Expr: `value.cells.A1 + value.cells.A2 == 12`},
		"process":   {Kind: Process, Steps: []string{"File", "Save As", "Save"}},
		"image":     {Kind: FileEqual, File: "/root/near.png", Asset: "gold.png", Mode: "image", Tolerance: 0.02},
	}
	for name, s := range specs {
		c, err := Compile(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := c.Evaluate(context.Background(), ev, nil); !r.Pass {
					b.Fatal(r.Reason)
				}
			}
		})
	}
}
