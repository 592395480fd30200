package x11

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/jezek/xgb/xproto"
)

// Window is a top-level window managed by the window manager.
type Window struct {
	ID     uint32 `json:"id"`
	Title  string `json:"title"`
	PID    int    `json:"pid,omitempty"`
	X      int    `json:"x"`
	Y      int    `json:"y"`
	W      int    `json:"w"`
	H      int    `json:"h"`
	Active bool   `json:"active,omitempty"`
	// Popup is set for an override-redirect window that the window
	// manager does not manage: an open menu, a popover, a tooltip.
	Popup bool `json:"popup,omitempty"`
	// Hidden is set for a window that is not on the screen now: on
	// another workspace, minimised, or withdrawn (not viewable).
	Hidden bool `json:"hidden,omitempty"`
	// shell is set for a window of the desktop session itself: a panel,
	// a dock, the desktop.
	shell bool
}

func (c *Conn) atom(name string) (xproto.Atom, error) {
	if a, ok := c.atoms[name]; ok {
		return a, nil
	}
	r, err := xproto.InternAtom(c.x, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0, fmt.Errorf("intern atom %s: %w", name, err)
	}
	c.atoms[name] = r.Atom
	return r.Atom, nil
}

func (c *Conn) property(w xproto.Window, name string) ([]byte, error) {
	a, err := c.atom(name)
	if err != nil {
		return nil, err
	}
	r, err := xproto.GetProperty(c.x, false, w, a, xproto.GetPropertyTypeAny, 0, 1<<16).Reply()
	if err != nil {
		return nil, err
	}
	return r.Value, nil
}

func words(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// Windows lists the top-level windows in the window manager's client
// list (_NET_CLIENT_LIST), with titles, owning process and geometry: the
// applications' windows, without the desktop session's own panels, docks
// and desktop (_NET_WM_WINDOW_TYPE_DOCK and _DESKTOP), which XFCE lists.
func (c *Conn) Windows() ([]Window, error) {
	ws, err := c.windows("_NET_CLIENT_LIST")
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ws, func(w Window) bool { return w.shell }), nil
}

// WindowAt returns the topmost window containing (x, y). An open menu or
// popover (an override-redirect window, which the window manager does not
// list) is returned as a Popup; other windows come from the window
// manager's stacking list.
func (c *Conn) WindowAt(x, y int) (Window, bool, error) {
	if w, ok := c.popupAt(x, y); ok {
		return w, true, nil
	}
	ws, err := c.windows("_NET_CLIENT_LIST_STACKING")
	if err != nil {
		return Window{}, false, err
	}
	for i := len(ws) - 1; i >= 0; i-- { // bottom to top: look from the top
		w := ws[i]
		if x >= w.X && y >= w.Y && x < w.X+w.W && y < w.Y+w.H {
			return w, true, nil
		}
	}
	return Window{}, false, nil
}

// popupAt finds the topmost mapped child of the root window that holds
// (x, y), in the server's stacking order, and returns it when it is an
// override-redirect window.
func (c *Conn) popupAt(x, y int) (Window, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tree, err := xproto.QueryTree(c.x, c.root).Reply()
	if err != nil {
		return Window{}, false
	}
	for i := len(tree.Children) - 1; i >= 0; i-- { // bottom to top: look from the top
		w := tree.Children[i]
		attr, err := xproto.GetWindowAttributes(c.x, w).Reply()
		if err != nil || attr.MapState != xproto.MapStateViewable || attr.Class == xproto.WindowClassInputOnly {
			continue
		}
		g, err := xproto.GetGeometry(c.x, xproto.Drawable(w)).Reply()
		if err != nil {
			continue
		}
		wx, wy, ww, wh := int(g.X), int(g.Y), int(g.Width), int(g.Height)
		if x < wx || y < wy || x >= wx+ww || y >= wy+wh {
			continue
		}
		if !attr.OverrideRedirect {
			return Window{}, false
		}
		win := Window{ID: uint32(w), X: wx, Y: wy, W: ww, H: wh, Popup: true}
		if b, err := c.property(w, "_NET_WM_PID"); err == nil && len(b) >= 4 {
			win.PID = int(binary.LittleEndian.Uint32(b))
		}
		return win, true
	}
	return Window{}, false
}

func (c *Conn) windows(listProp string) ([]Window, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list, err := c.property(c.root, listProp)
	if err != nil {
		return nil, fmt.Errorf("list windows: %w", err)
	}
	var active uint32
	if b, err := c.property(c.root, "_NET_ACTIVE_WINDOW"); err == nil && len(b) >= 4 {
		active = binary.LittleEndian.Uint32(b)
	}
	var shell []uint32
	for _, t := range []string{"_NET_WM_WINDOW_TYPE_DOCK", "_NET_WM_WINDOW_TYPE_DESKTOP"} {
		if a, err := c.atom(t); err == nil {
			shell = append(shell, uint32(a))
		}
	}
	var out []Window
	for _, id := range words(list) {
		w := xproto.Window(id)
		win := Window{ID: id, Active: id == active}
		if b, err := c.property(w, "_NET_WM_WINDOW_TYPE"); err == nil {
			win.shell = slices.ContainsFunc(words(b), func(t uint32) bool { return slices.Contains(shell, t) })
		}
		if b, err := c.property(w, "_NET_WM_NAME"); err == nil && len(b) > 0 {
			win.Title = string(b)
		} else if b, err := c.property(w, "WM_NAME"); err == nil {
			win.Title = string(b)
		}
		if b, err := c.property(w, "_NET_WM_PID"); err == nil && len(b) >= 4 {
			win.PID = int(binary.LittleEndian.Uint32(b))
		}
		if a, err := xproto.GetWindowAttributes(c.x, w).Reply(); err == nil {
			win.Hidden = a.MapState != xproto.MapStateViewable
		}
		if g, err := xproto.GetGeometry(c.x, xproto.Drawable(w)).Reply(); err == nil {
			win.W, win.H = int(g.Width), int(g.Height)
			if t, err := xproto.TranslateCoordinates(c.x, w, c.root, 0, 0).Reply(); err == nil {
				win.X, win.Y = int(t.DstX), int(t.DstY)
			}
		}
		out = append(out, win)
	}
	return out, nil
}

// Activate asks the window manager to make the window active and raise it
// (an EWMH _NET_ACTIVE_WINDOW request, sent as a pager would).
func (c *Conn) Activate(id uint32) error {
	return c.request(id, "_NET_ACTIVE_WINDOW", 2)
}

// CloseWindow asks the window manager to close the window as its close
// button would (an EWMH _NET_CLOSE_WINDOW request): the application is
// told and may save, ask, or refuse.
func (c *Conn) CloseWindow(id uint32) error {
	return c.request(id, "_NET_CLOSE_WINDOW", 0, 2)
}

// request sends the window manager an EWMH request about a window: a
// client message of type atom with data, as a pager (source 2) sends it.
func (c *Conn) request(id uint32, atom string, data ...uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, err := c.atom(atom)
	if err != nil {
		return err
	}
	words := make([]uint32, 5)
	copy(words, data)
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: xproto.Window(id),
		Type:   a,
		Data:   xproto.ClientMessageDataUnionData32New(words),
	}
	mask := uint32(xproto.EventMaskSubstructureRedirect | xproto.EventMaskSubstructureNotify)
	return xproto.SendEventChecked(c.x, false, c.root, mask, string(ev.Bytes())).Check()
}

// WindowManager returns the name of the EWMH window manager managing the
// screen, and false while there is none: a manager advertises itself with
// _NET_SUPPORTING_WM_CHECK on the root window once it has taken over the
// screen, so windows mapped from then on are managed.
func (c *Conn) WindowManager() (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := c.property(c.root, "_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return "", false, err
	}
	if len(b) < 4 {
		return "", false, nil
	}
	check := xproto.Window(binary.LittleEndian.Uint32(b))
	// The check window names itself on its own property too; a stale id
	// left by a manager that exited fails here.
	own, err := c.property(check, "_NET_SUPPORTING_WM_CHECK")
	if err != nil || len(own) < 4 || xproto.Window(binary.LittleEndian.Uint32(own)) != check {
		return "", false, nil
	}
	name, _ := c.property(check, "_NET_WM_NAME")
	return string(name), true, nil
}
