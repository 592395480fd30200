package atspi

import (
	"context"
	"slices"

	"github.com/godbus/dbus/v5"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// DefaultMaxCells is how many cells of one table, list or tree view a
// read takes at most: a file list or a variables table whole, the first
// rows of a spreadsheet.
const DefaultMaxCells = 200

// cells reads the children of a container that manages its descendants,
// only those on the screen: a container with at most maxChildren children
// gives its children, of which those whose box meets the container's are
// kept; a bigger one (a spreadsheet) is read through its Table
// interface from the cell at its top left corner, row by row, while the
// cells are inside its box. At most maxCells are read; a container with
// more on the screen is reported in the tree's errors. A negative
// maxCells reads none.
func (w *walker) cells(ctx context.Context, obj dbus.BusObject, n *observe.Node, nkids int32, depth int) {
	if w.maxCells < 0 || n.Box.W <= 0 || n.Box.H <= 0 || !slices.Contains(n.States, "visible") {
		return // not on the screen: no cell is
	}
	var kids []ref
	if nkids <= maxChildren {
		if err := w.c.callObj(ctx, obj, ifAccessible+".GetChildren", &kids); err != nil {
			w.errorf("cells of %s %q: %v", n.Role, n.Name, err)
			return
		}
		kids = w.onScreen(ctx, kids, n.Box)
	} else {
		kids = w.tableCells(ctx, obj, n)
	}
	if len(kids) > w.maxCells {
		w.errorf("%s %q: more than %d cells on the screen, the first %d read (the limit of cells per container)", n.Role, n.Name, w.maxCells, w.maxCells)
		kids = kids[:w.maxCells]
	}
	n.Children = w.readAll(ctx, kids, n, depth+1)
}

// onScreen keeps the nodes whose box meets the container's box, asking
// for every box at once.
func (w *walker) onScreen(ctx context.Context, kids []ref, box action.Box) []ref {
	ctx, cancel := context.WithTimeout(ctx, w.c.CallTimeout)
	defer cancel()
	done := make(chan *dbus.Call, len(kids))
	calls := make([]*dbus.Call, len(kids))
	for i, k := range kids {
		calls[i] = w.c.object(k).GoWithContext(ctx, ifComponent+".GetExtents", 0, done, w.coords)
	}
	var out []ref
	for i, call := range calls {
		<-call.Done
		var b struct{ X, Y, W, H int32 }
		if call.Store(&b) != nil {
			continue
		}
		if meets(action.Box{X: int(b.X), Y: int(b.Y), W: int(b.W), H: int(b.H)}, box) {
			out = append(out, kids[i])
		}
	}
	return out
}

// meets reports whether a box of positive size overlaps the other.
func meets(a, b action.Box) bool {
	return a.W > 0 && a.H > 0 && a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// tableCells finds the cells of a big table that lie in its box: the cell
// at the top left corner gives the first row and column; the columns of
// the first row are read one by one until a cell starts right of the
// box, then each further row, its columns asked for at once, until a row
// starts below it. It stops after maxCells+1 cells.
func (w *walker) tableCells(ctx context.Context, obj dbus.BusObject, n *observe.Node) []ref {
	var nrows, ncols int32
	if v, err := w.c.propObj(ctx, obj, ifTable, "NRows"); err == nil {
		nrows, _ = v.Value().(int32)
	}
	if v, err := w.c.propObj(ctx, obj, ifTable, "NColumns"); err == nil {
		ncols, _ = v.Value().(int32)
	}
	if nrows <= 0 || ncols <= 0 {
		w.errorf("%s %q manages its descendants and has no table to read them by", n.Role, n.Name)
		return nil
	}
	b := n.Box
	var first ref
	if err := w.c.callObj(ctx, obj, ifComponent+".GetAccessibleAtPoint", &first, int32(b.X+1), int32(b.Y+1), w.coords); err != nil || first.Path == "" {
		w.errorf("%s %q: no cell at its top left corner", n.Role, n.Name)
		return nil
	}
	fobj := w.c.object(first)
	var idx, row0, col0 int32
	if err := w.c.callObj(ctx, fobj, ifAccessible+".GetIndexInParent", &idx); err != nil {
		w.errorf("%s %q: the corner cell's index: %v", n.Role, n.Name, err)
		return nil
	}
	if w.c.callObj(ctx, obj, ifTable+".GetRowAtIndex", &row0, idx) != nil || w.c.callObj(ctx, obj, ifTable+".GetColumnAtIndex", &col0, idx) != nil {
		w.errorf("%s %q: the corner cell's row and column", n.Role, n.Name)
		return nil
	}
	right, bottom := b.X+b.W, b.Y+b.H
	var out []ref
	cols := 0
	for c := col0; c < ncols && len(out) <= w.maxCells; c++ {
		cell, box, ok := w.cellAt(ctx, obj, row0, c)
		if !ok || box.X >= right {
			break
		}
		out = append(out, cell)
		cols++
	}
	for r := row0 + 1; r < nrows && cols > 0 && len(out) <= w.maxCells; r++ {
		row := w.rowCells(ctx, obj, r, col0, int32(cols))
		if len(row) == 0 || row[0].box.Y >= bottom {
			break
		}
		for _, c := range row {
			out = append(out, c.ref)
		}
	}
	return out
}

type cellRef struct {
	ref ref
	box action.Box
}

func (w *walker) cellAt(ctx context.Context, obj dbus.BusObject, row, col int32) (ref, action.Box, bool) {
	var cell ref
	if err := w.c.callObj(ctx, obj, ifTable+".GetAccessibleAt", &cell, row, col); err != nil || cell.Path == "" {
		return ref{}, action.Box{}, false
	}
	var b struct{ X, Y, W, H int32 }
	if err := w.c.call(ctx, cell, ifComponent+".GetExtents", &b, w.coords); err != nil {
		return ref{}, action.Box{}, false
	}
	return cell, action.Box{X: int(b.X), Y: int(b.Y), W: int(b.W), H: int(b.H)}, true
}

// rowCells reads n cells of a row from col0, the calls sent together.
func (w *walker) rowCells(ctx context.Context, obj dbus.BusObject, row, col0, n int32) []cellRef {
	ctx, cancel := context.WithTimeout(ctx, w.c.CallTimeout)
	defer cancel()
	done := make(chan *dbus.Call, n)
	calls := make([]*dbus.Call, n)
	for i := range n {
		calls[i] = obj.GoWithContext(ctx, ifTable+".GetAccessibleAt", 0, done, row, col0+i)
	}
	refs := make([]ref, 0, n)
	for _, call := range calls {
		<-call.Done
		var c ref
		if call.Store(&c) != nil || c.Path == "" {
			break
		}
		refs = append(refs, c)
	}
	if len(refs) == 0 {
		return nil
	}
	var out []cellRef
	done2 := make(chan *dbus.Call, len(refs))
	ext := make([]*dbus.Call, len(refs))
	for i, c := range refs {
		ext[i] = w.c.object(c).GoWithContext(ctx, ifComponent+".GetExtents", 0, done2, w.coords)
	}
	for i, call := range ext {
		<-call.Done
		var b struct{ X, Y, W, H int32 }
		if call.Store(&b) != nil {
			break
		}
		out = append(out, cellRef{refs[i], action.Box{X: int(b.X), Y: int(b.Y), W: int(b.W), H: int(b.H)}})
	}
	return out
}
