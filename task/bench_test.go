package task

import "testing"

func BenchmarkLoadExampleSuite(b *testing.B) {
	for b.Loop() {
		if _, ps := Load(exampleSuite); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}
