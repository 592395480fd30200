package atspi

import (
	"context"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// App is an application on the accessibility bus.
type App struct {
	Name string
	PID  int
	// WindowCoords is set for toolkits without screen coordinates (GTK 4).
	WindowCoords bool
	ref          ref
}

// AppsWithPIDs lists the applications with their processes.
func (c *Client) AppsWithPIDs(ctx context.Context) ([]App, error) {
	var kids []ref
	if err := c.call(ctx, ref{registryName, rootPath}, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	out := make([]App, 0, len(kids))
	for _, k := range kids {
		a := App{ref: k, WindowCoords: c.windowCoordsOnly(ctx, k)}
		if v, err := c.prop(ctx, k, ifAccessible, "Name"); err == nil {
			a.Name, _ = v.Value().(string)
		}
		var pid uint32
		if err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, k.Bus).Store(&pid); err == nil {
			a.PID = int(pid)
		}
		out = append(out, a)
	}
	return out, nil
}

// Top is a top-level node (a window) of an application.
type Top struct {
	Name string
	Box  action.Box // in the application's coordinates (see App.WindowCoords)
	ref  ref
}

// TopLevels lists an application's top-level nodes that are showing.
func (c *Client) TopLevels(ctx context.Context, a App) ([]Top, error) {
	var kids []ref
	if err := c.call(ctx, a.ref, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, err
	}
	coords := Screen
	if a.WindowCoords {
		coords = Window
	}
	var out []Top
	for _, k := range kids {
		var bits []uint32
		if err := c.call(ctx, k, ifAccessible+".GetState", &bits); err != nil {
			continue
		}
		if st := States(bits); !contains(st, "visible") {
			continue
		}
		t := Top{ref: k}
		if v, err := c.prop(ctx, k, ifAccessible, "Name"); err == nil {
			t.Name, _ = v.Value().(string)
		}
		var ext struct{ X, Y, W, H int32 }
		if err := c.call(ctx, k, ifComponent+".GetExtents", &ext, coords); err == nil {
			t.Box = action.Box{X: int(ext.X), Y: int(ext.Y), W: int(ext.W), H: int(ext.H)}
		}
		out = append(out, t)
	}
	return out, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// PathAt descends from a top-level node to the deepest node at (x, y)
// with Component.GetAccessibleAtPoint, in the given coordinates, and
// returns the nodes on the way (top first) with role, name and states;
// the children of the last node are read too, for describing nodes
// without a label. It makes a few calls a level instead of reading the
// whole tree.
func (c *Client) PathAt(ctx context.Context, top Top, x, y int, coords uint32) ([]*observe.Node, error) {
	var path []*observe.Node
	cur := top.ref
	for depth := 0; depth < 64; depth++ {
		n, err := c.brief(ctx, cur)
		if err != nil {
			return path, err
		}
		path = append(path, n)
		var next ref
		err = c.call(ctx, cur, ifComponent+".GetAccessibleAtPoint", &next, int32(x), int32(y), coords)
		if err != nil || next.Path == "" || next.Path == "/org/a11y/atspi/null" || next == cur {
			// Some containers (GTK 3 notebooks) answer nothing although a
			// page holds the point: look two levels down for a node whose
			// box holds it.
			var ok bool
			if next, ok = c.childAt(ctx, cur, x, y, coords, 2); !ok {
				break
			}
		}
		cur = next
	}
	if len(path) > 0 {
		last := path[len(path)-1]
		var kids []ref
		if err := c.call(ctx, cur, ifAccessible+".GetChildren", &kids); err == nil {
			for i, k := range kids {
				if i >= 8 {
					break
				}
				if ch, err := c.brief(ctx, k); err == nil {
					last.Children = append(last.Children, ch)
				}
			}
		}
	}
	return path, nil
}

// childAt finds, breadth first and at most depth levels down, a visible
// descendant of r whose box holds (x, y).
func (c *Client) childAt(ctx context.Context, r ref, x, y int, coords uint32, depth int) (ref, bool) {
	level := []ref{r}
	for d := 0; d < depth; d++ {
		var next []ref
		for _, p := range level {
			var kids []ref
			if err := c.call(ctx, p, ifAccessible+".GetChildren", &kids); err != nil {
				continue
			}
			for _, k := range kids {
				var ext struct{ X, Y, W, H int32 }
				if err := c.call(ctx, k, ifComponent+".GetExtents", &ext, coords); err == nil &&
					ext.W > 0 && ext.H > 0 && x >= int(ext.X) && y >= int(ext.Y) && x < int(ext.X+ext.W) && y < int(ext.Y+ext.H) {
					var bits []uint32
					if c.call(ctx, k, ifAccessible+".GetState", &bits) == nil && contains(States(bits), "visible") {
						return k, true
					}
				}
				next = append(next, k)
			}
			if len(next) > 64 {
				break
			}
		}
		level = next
	}
	return ref{}, false
}

// brief reads a node's role, name, states and text, without children.
func (c *Client) brief(ctx context.Context, r ref) (*observe.Node, error) {
	n := &observe.Node{}
	if err := c.call(ctx, r, ifAccessible+".GetRoleName", &n.Role); err != nil {
		return nil, err
	}
	if v, err := c.prop(ctx, r, ifAccessible, "Name"); err == nil {
		n.Name, _ = v.Value().(string)
	}
	var bits []uint32
	if err := c.call(ctx, r, ifAccessible+".GetState", &bits); err == nil {
		n.States = States(bits)
	}
	if strings.TrimSpace(n.Name) == "" {
		var count int32
		if v, err := c.prop(ctx, r, ifText, "CharacterCount"); err == nil {
			count, _ = v.Value().(int32)
		}
		if count > 0 {
			var s string
			if err := c.call(ctx, r, ifText+".GetText", &s, int32(0), min(count, 200)); err == nil {
				n.Text = s
			}
		}
	}
	return n, nil
}
