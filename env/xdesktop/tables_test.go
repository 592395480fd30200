package xdesktop

import (
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/atspi"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// The containers that manage their descendants (Qt item views, GTK tree
// views, a spreadsheet's grid) give the cells on the screen, to the tree
// and to element queries.

func TestQtTableInTheTree(t *testing.T) {
	need(t, "kalgebra")
	d := start(t)
	launch(t, d, "kalgebra", "KAlgebra")
	waitFor(t, d, "the console's input", func(tr *observe.Tree) bool {
		return len(tr.Find("kalgebra", "text", "", "", false)) > 0 && len(tr.Find("kalgebra", "tree item", "pi", "", false)) > 0
	})
	for _, def := range []string{"apples:=3\n", "pears:=5\n"} {
		if _, err := d.Do(ctx(t), []action.Action{{Kind: action.Type, Text: def}}); err != nil {
			t.Fatal(err)
		}
	}
	// The variables table holds a row per variable: name, then value.
	row := func(tr *observe.Tree, name, value string) bool {
		for _, tb := range tr.Find("kalgebra", "tree", "", "", false) {
			for i, c := range tb.Children {
				if c.Name == name && i+1 < len(tb.Children) && tb.Children[i+1].Name == value {
					return true
				}
			}
		}
		return false
	}
	waitFor(t, d, "apples = 3 and pears = 5 in the variables table", func(tr *observe.Tree) bool {
		return row(tr, "apples", "3") && row(tr, "pears", "5")
	})
	els, err := d.Elements(ctx(t), observe.ElementQuery{App: "kalgebra", Role: "tree item", Name: "pears"})
	if err != nil || len(els) != 1 {
		t.Fatalf("elements query for the variable pears: %v, %v", els, err)
	}
}

func TestGTKFileListInTheTree(t *testing.T) {
	need(t, "mousepad")
	d := start(t)
	var steps []task.Step
	for _, f := range []string{"alpha.txt", "beta.txt", "gamma.csv"} {
		steps = append(steps, task.Step{Write: &task.Write{Path: "~/" + f, Content: "x\n"}})
	}
	launch(t, d, "mousepad", "Mousepad", steps...)
	for _, c := range [][2]string{{"menu", "File"}, {"menu item", "Open..."}, {"label", "Home"}} {
		waitFor(t, d, c[0]+" "+c[1], showing(c[0], c[1]))
		if _, err := d.Do(ctx(t), []action.Action{byName(c[0], c[1])}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, d, "the three files in the file chooser's list", func(tr *observe.Tree) bool {
		for _, f := range []string{"alpha.txt", "beta.txt", "gamma.csv"} {
			if !showing("table cell", f)(tr) {
				return false
			}
		}
		return true
	})
	els, err := d.Elements(ctx(t), observe.ElementQuery{Role: "table cell", Name: "gamma.csv"})
	if err != nil || len(els) != 1 {
		t.Fatalf("elements query for gamma.csv: %v, %v", els, err)
	}
	// A click on a row records the cell.
	steps2, err := d.Do(ctx(t), []action.Action{byName("table cell", "beta.txt")})
	if err != nil || steps2[0].Element != "table cell beta.txt" {
		t.Fatalf("click on beta.txt recorded %+v (%v)", steps2, err)
	}
}

// TestSpreadsheetCellsAreBounded reads a spreadsheet whose grid claims
// millions of cells: only the cells on the screen are read, at most the
// limit, and reaching it is reported.
func TestSpreadsheetCellsAreBounded(t *testing.T) {
	need(t, "libreoffice")
	d := start(t)
	launch(t, d, "libreoffice-calc", "LibreOffice Calc")
	var tr *observe.Tree
	waitFor(t, d, "the sheet's cells", func(got *observe.Tree) bool {
		tr = got
		return len(got.Find("", "table cell", "", "", false)) > 0
	})
	var sheet []*observe.Node
	for _, tb := range tr.Find("", "table", "", "", false) {
		if strings.HasPrefix(tb.Name, "Sheet") {
			sheet = append(sheet, tb.Node)
		}
	}
	if len(sheet) != 1 {
		t.Fatalf("%d sheet tables", len(sheet))
	}
	if n := len(sheet[0].Children); n != atspi.DefaultMaxCells {
		t.Errorf("%d cells read of the sheet, want the limit %d", n, atspi.DefaultMaxCells)
	}
	for _, c := range sheet[0].Children {
		if c.Box.Y >= sheet[0].Box.Y+sheet[0].Box.H || c.Box.X >= sheet[0].Box.X+sheet[0].Box.W {
			t.Errorf("cell %q at %+v lies outside the sheet's box %+v", c.Name, c.Box, sheet[0].Box)
		}
	}
	want := "more than 200 cells on the screen, the first 200 read"
	found := false
	for _, e := range tr.Errors {
		found = found || strings.Contains(e, want)
	}
	if !found {
		t.Errorf("the limit is not reported: errors %q", tr.Errors)
	}
	if first := sheet[0].Children[0]; !strings.Contains(first.Name, "A1") {
		t.Errorf("the first cell read is %q, want A1", first.Name)
	}
}
