package atspi

import (
	"context"

	"fmt"
	"github.com/godbus/dbus/v5"
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

// AppsWithPIDs lists the applications with their processes. A bus name
// belongs to one process for its life, so the process and name of each
// are asked for once.
func (c *Client) AppsWithPIDs(ctx context.Context) ([]App, error) {
	var kids []ref
	if err := c.call(ctx, ref{registryName, rootPath}, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	c.forget(kids)
	out := make([]App, 0, len(kids))
	for _, k := range kids {
		c.mu.Lock()
		a, ok := c.apps[k.Bus]
		c.mu.Unlock()
		if !ok {
			a = App{ref: k, WindowCoords: c.windowCoordsOnly(ctx, k)}
			if v, err := c.prop(ctx, k, ifAccessible, "Name"); err == nil {
				a.Name, _ = v.Value().(string)
			}
			var pid uint32
			if err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, k.Bus).Store(&pid); err != nil {
				out = append(out, a)
				continue // gone, or not yet known: ask again next time
			}
			a.PID = int(pid)
			c.mu.Lock()
			c.apps[k.Bus] = a
			c.mu.Unlock()
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

// TopLevels lists an application's top-level nodes that are showing. The
// calls for all of them are sent together.
func (c *Client) TopLevels(ctx context.Context, a App) ([]Top, error) {
	var kids []ref
	if err := c.call(ctx, a.ref, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, err
	}
	coords := Screen
	if a.WindowCoords {
		coords = Window
	}
	ctx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	done := make(chan *dbus.Call, 3*len(kids))
	type calls struct{ state, name, ext *dbus.Call }
	cs := make([]calls, len(kids))
	for i, k := range kids {
		obj := c.object(k)
		cs[i] = calls{
			state: obj.GoWithContext(ctx, ifAccessible+".GetState", 0, done),
			name:  obj.GoWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, done, ifAccessible, "Name"),
			ext:   obj.GoWithContext(ctx, ifComponent+".GetExtents", 0, done, coords),
		}
	}
	var out []Top
	for i, k := range kids {
		<-cs[i].state.Done
		<-cs[i].name.Done
		<-cs[i].ext.Done
		var bits []uint32
		if cs[i].state.Store(&bits) != nil || !contains(States(bits), "visible") {
			continue
		}
		t := Top{ref: k}
		var v dbus.Variant
		if cs[i].name.Store(&v) == nil {
			t.Name, _ = v.Value().(string)
		}
		var ext struct{ X, Y, W, H int32 }
		if cs[i].ext.Store(&ext) == nil {
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
// with Component.GetAccessibleAtPoint, in the given coordinates, one call
// a level, and returns that node with role, name, states and, for a node
// without a name, its text and the names of its first children (for
// describing nodes without a label).
func (c *Client) PathAt(ctx context.Context, top Top, x, y int, coords uint32) (*observe.Node, error) {
	cur := top.ref
	for depth := 0; depth < 64; depth++ {
		var next ref
		err := c.call(ctx, cur, ifComponent+".GetAccessibleAtPoint", &next, int32(x), int32(y), coords)
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
	last, err := c.brief(ctx, cur)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(last.Name) == "" && strings.TrimSpace(last.Text) == "" {
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
	return last, nil
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

// brief reads a node's role, name, states and text, without children;
// the calls are sent together.
func (c *Client) brief(ctx context.Context, r ref) (*observe.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	obj := c.object(r)
	done := make(chan *dbus.Call, 4)
	role := obj.GoWithContext(ctx, ifAccessible+".GetRoleName", 0, done)
	name := obj.GoWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, done, ifAccessible, "Name")
	state := obj.GoWithContext(ctx, ifAccessible+".GetState", 0, done)
	text := obj.GoWithContext(ctx, ifText+".GetText", 0, done, int32(0), int32(-1))
	for _, call := range []*dbus.Call{role, name, state, text} {
		<-call.Done
	}
	n := &observe.Node{}
	if err := role.Store(&n.Role); err != nil {
		return nil, err
	}
	var v dbus.Variant
	if name.Store(&v) == nil {
		n.Name, _ = v.Value().(string)
	}
	var bits []uint32
	if state.Store(&bits) == nil {
		n.States = States(bits)
	}
	if strings.TrimSpace(n.Name) == "" {
		var s string
		if text.Store(&s) == nil {
			if r := []rune(s); len(r) > 200 {
				s = string(r[:200])
			}
			n.Text = s
		}
	}
	return n, nil
}
