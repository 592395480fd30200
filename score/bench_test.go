package score

import (
	"fmt"
	"testing"

	"github.com/proctor-eval/proctor/action"
)

// BenchmarkCCScore aligns two 100-action sequences (50 clicks and 50
// distinct typed texts each): 2,500 text similarities and a 100x100 table.
func BenchmarkCCScore(b *testing.B) {
	var gold, pred []action.Action
	for i := range 50 {
		box := &action.Box{X: 10 * i, Y: 10 * i, W: 20, H: 20}
		gold = append(gold, click(float64(10*i+5), float64(10*i+5), box), action.Action{Kind: action.Type, Text: fmt.Sprintf("typed text number %d", i)})
		pred = append(pred, click(float64(10*i+7), float64(10*i+3), nil), action.Action{Kind: action.Type, Text: fmt.Sprintf("typed test number %d", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		CCScore(gold, pred, hd)
	}
}

func BenchmarkCharBLEU(b *testing.B) {
	for b.Loop() {
		CharBLEU("open the terminal and list the files", "open a terminal and list all files")
	}
}

// BenchmarkCharBLEUGeneral is the plain alternative to CharBLEU: the
// general, hashing BLEU on the same runes.
func BenchmarkCharBLEUGeneral(b *testing.B) {
	c, r := []rune("open the terminal and list the files"), [][]rune{[]rune("open a terminal and list all files")}
	for b.Loop() {
		BLEU(c, r, 4)
	}
}
