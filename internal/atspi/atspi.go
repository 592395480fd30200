// Package atspi reads the accessibility tree of a desktop session over
// AT-SPI's D-Bus interfaces: the registry's applications, then each node's
// role, name, text or value, states and on-screen box.
package atspi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

const (
	registryName = "org.a11y.atspi.Registry"
	rootPath     = "/org/a11y/atspi/accessible/root"
	ifAccessible = "org.a11y.atspi.Accessible"
	ifComponent  = "org.a11y.atspi.Component"
	ifText       = "org.a11y.atspi.Text"
	ifValue      = "org.a11y.atspi.Value"
	ifTable      = "org.a11y.atspi.Table"
)

// Coordinate systems of GetExtents.
const (
	// Screen asks for screen coordinates. GTK 4 does not support them.
	Screen = uint32(0)
	// Window asks for coordinates relative to the node's top-level window.
	// Qt 5 answers them wrongly.
	Window = uint32(1)
	// Auto (the default) reads GTK 4 applications in window coordinates,
	// marking their nodes WindowRelative, and the others in screen ones.
	Auto = uint32(99)
)

// stateNames follow AtspiStateType's order.
var stateNames = []string{"invalid", "active", "armed", "busy", "checked", "collapsed", "defunct",
	"editable", "enabled", "expandable", "expanded", "focusable", "focused", "has-tooltip", "horizontal",
	"iconified", "modal", "multi-line", "multiselectable", "opaque", "pressed", "resizable", "selectable",
	"selected", "sensitive", "showing", "single-line", "stale", "transient", "vertical", "visible",
	"manages-descendants", "indeterminate", "required", "truncated", "animated", "invalid-entry",
	"supports-autocompletion", "selectable-text", "is-default", "visited", "checkable", "has-popup",
	"read-only"}

// States decodes an AT-SPI state set (two 32-bit words) into names.
func States(bits []uint32) []string {
	var out []string
	for i, name := range stateNames {
		w, b := i/32, uint(i%32)
		if w < len(bits) && bits[w]&(1<<b) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// Client reads one session's accessibility bus.
type Client struct {
	conn     *dbus.Conn
	mu       sync.Mutex
	toolkits map[string]toolkitInfo // by bus name
	// peers are direct connections to applications that offer one
	// (GetApplicationBusAddress), by bus name; nil where none is.
	peers map[string]*dbus.Conn
	apps  map[string]App // by bus name, with their processes
	// CallTimeout bounds each D-Bus call, so that a hung or dead
	// application cannot stall a read.
	CallTimeout time.Duration
}

// Connect finds the accessibility bus through the session bus at
// sessionAddr (org.a11y.Bus.GetAddress) and connects to it.
func Connect(ctx context.Context, sessionAddr string) (*Client, error) {
	sess, err := dbus.Connect(sessionAddr)
	if err != nil {
		return nil, fmt.Errorf("connect to the session bus: %w", err)
	}
	defer sess.Close()
	var addr string
	call := sess.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0)
	if err := call.Store(&addr); err != nil {
		return nil, fmt.Errorf("find the accessibility bus (is at-spi-bus-launcher running?): %w", err)
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the accessibility bus %s: %w", addr, err)
	}
	return &Client{conn: conn, CallTimeout: 2 * time.Second, toolkits: map[string]toolkitInfo{}, peers: map[string]*dbus.Conn{}, apps: map[string]App{}}, nil
}

// Close closes the connections.
func (c *Client) Close() error {
	c.mu.Lock()
	for _, p := range c.peers {
		if p != nil {
			p.Close()
		}
	}
	c.peers = map[string]*dbus.Conn{}
	c.mu.Unlock()
	return c.conn.Close()
}

// object is the D-Bus object of a node: reached over the application's
// direct connection where it has one, which spares every call the trip
// through the accessibility bus's daemon (GTK 3 offers one; GTK 4 and
// Qt do not).
func (c *Client) object(r ref) dbus.BusObject {
	c.mu.Lock()
	p := c.peers[r.Bus]
	if p != nil && !p.Connected() {
		delete(c.peers, r.Bus)
		p = nil
	}
	c.mu.Unlock()
	if p != nil {
		return p.Object(r.Bus, r.Path)
	}
	return c.conn.Object(r.Bus, r.Path)
}

// forget drops what is known of applications no longer on the bus (each
// application's bus name is new): their toolkit, process and direct
// connection.
func (c *Client) forget(apps []ref) {
	live := make(map[string]bool, len(apps))
	for _, a := range apps {
		live[a.Bus] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for bus, p := range c.peers {
		if !live[bus] {
			if p != nil {
				p.Close()
			}
			delete(c.peers, bus)
		}
	}
	for bus := range c.apps {
		if !live[bus] {
			delete(c.apps, bus)
		}
	}
	for bus := range c.toolkits {
		if !live[bus] {
			delete(c.toolkits, bus)
		}
	}
}

// connectPeer opens a direct connection to the application on bus, once;
// where it offers none, the bus is used.
func (c *Client) connectPeer(ctx context.Context, bus string) {
	c.mu.Lock()
	_, known := c.peers[bus]
	c.mu.Unlock()
	if known {
		return
	}
	var addr string
	var peer *dbus.Conn
	if err := c.call(ctx, ref{bus, rootPath}, "org.a11y.atspi.Application.GetApplicationBusAddress", &addr); err == nil && addr != "" {
		if p, err := dbus.Dial(addr, dbus.WithContext(ctx)); err == nil {
			if err := p.Auth(nil); err == nil {
				peer = p
			} else {
				p.Close()
			}
		}
	}
	c.mu.Lock()
	if old, ok := c.peers[bus]; ok && old != nil {
		if peer != nil {
			peer.Close()
		}
	} else {
		c.peers[bus] = peer
	}
	c.mu.Unlock()
}

type ref struct {
	Bus  string
	Path dbus.ObjectPath
}

func (c *Client) call(ctx context.Context, r ref, method string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	call := c.object(r).CallWithContext(ctx, method, 0, args...)
	if call.Err != nil {
		return call.Err
	}
	if out == nil {
		return nil
	}
	return call.Store(out)
}

func (c *Client) prop(ctx context.Context, r ref, iface, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := c.call(ctx, r, "org.freedesktop.DBus.Properties.Get", &v, iface, name)
	return v, err
}

// Options limit a read.
type Options struct {
	MaxDepth int // 0: 40
	MaxNodes int // 0: 5000
	// MaxCells bounds the cells read from one container that manages
	// its descendants (a table, a list, a tree view); only those on the
	// screen are read. 0: DefaultMaxCells; negative: none.
	MaxCells int
	App      string // only this application (by name), when set
	Coords   uint32 // Auto (default: 0 means Auto), Screen or Window
}

// Apps lists the applications registered on the bus.
func (c *Client) Apps(ctx context.Context) ([]string, error) {
	var kids []ref
	if err := c.call(ctx, ref{registryName, rootPath}, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	var names []string
	for _, k := range kids {
		v, err := c.prop(ctx, k, ifAccessible, "Name")
		if err != nil {
			continue
		}
		if s, ok := v.Value().(string); ok {
			names = append(names, s)
		}
	}
	return names, nil
}

// Tree reads the accessibility tree of every application (or of o.App).
// Nodes that fail to answer are skipped and listed in Tree.Errors, so that
// one broken application does not hide the others. Applications are read
// in parallel.
func (c *Client) Tree(ctx context.Context, o Options) (*observe.Tree, error) {
	if o.MaxDepth == 0 {
		o.MaxDepth = 40
	}
	if o.MaxNodes == 0 {
		o.MaxNodes = 5000
	}
	if o.Coords == 0 {
		o.Coords = Auto
	}
	if o.MaxCells == 0 {
		o.MaxCells = DefaultMaxCells
	}
	var kids []ref
	if err := c.call(ctx, ref{registryName, rootPath}, ifAccessible+".GetChildren", &kids); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	c.forget(kids)
	t := &observe.Tree{}
	type result struct {
		node *observe.Node
		errs []string
	}
	results := make([]result, len(kids))
	var wg sync.WaitGroup
	budget := &nodeBudget{left: o.MaxNodes}
	for i, k := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.App != "" {
				// Only the application asked for is read.
				if v, err := c.prop(ctx, k, ifAccessible, "Name"); err != nil || !strings.EqualFold(fmt.Sprint(v.Value()), o.App) {
					return
				}
			}
			c.connectPeer(ctx, k.Bus)
			coords := o.Coords
			if coords == Auto {
				coords = Screen
				if c.windowCoordsOnly(ctx, k) {
					coords = Window
				}
			}
			w := &walker{c: c, budget: budget, maxDepth: o.MaxDepth, maxCells: o.MaxCells, coords: coords,
				getAll: c.toolkit(ctx, k).getAll, slots: make(chan struct{}, 16)}
			n, err := w.node(ctx, k, 0)
			if n != nil {
				n.WindowRelative = coords == Window
			}
			if n != nil {
				var pid uint32
				if err := c.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, k.Bus).Store(&pid); err == nil {
					n.PID = int(pid)
				}
			}
			if err != nil {
				w.errs = append(w.errs, fmt.Sprintf("application %s: %v", k.Bus, err))
			}
			results[i] = result{n, w.errs}
		}()
	}
	wg.Wait()
	for _, r := range results {
		t.Errors = append(t.Errors, r.errs...)
		if r.node == nil {
			continue
		}
		r.node.App = r.node.Name
		if o.App != "" && !strings.EqualFold(o.App, r.node.App) {
			continue
		}
		t.Apps = append(t.Apps, r.node)
	}
	if err := ctx.Err(); err != nil {
		return t, err
	}
	return t, nil
}

// windowCoordsOnly reports whether the application's toolkit cannot give
// screen coordinates (GTK 4).
func (c *Client) windowCoordsOnly(ctx context.Context, app ref) bool {
	return c.toolkit(ctx, app).windowCoords
}

// toolkitInfo is what a reader needs to know of an application's toolkit.
type toolkitInfo struct {
	windowCoords bool // no screen coordinates (GTK 4)
	// getAll: Properties.GetAll answers a node's name and child count in
	// one call (GTK). Qt 5 ends the application when asked.
	getAll bool
}

// toolkit tells an application's toolkit apart, once per bus name.
func (c *Client) toolkit(ctx context.Context, app ref) toolkitInfo {
	c.mu.Lock()
	v, ok := c.toolkits[app.Bus]
	c.mu.Unlock()
	if ok {
		return v
	}
	name, _ := c.prop(ctx, app, "org.a11y.atspi.Application", "ToolkitName")
	ver, _ := c.prop(ctx, app, "org.a11y.atspi.Application", "Version")
	tk, _ := name.Value().(string)
	vs, _ := ver.Value().(string)
	gtk := strings.EqualFold(tk, "GTK")
	v = toolkitInfo{windowCoords: gtk && vs != "" && vs[0] >= '4' && vs[0] <= '9', getAll: gtk}
	c.mu.Lock()
	c.toolkits[app.Bus] = v
	c.mu.Unlock()
	return v
}

type nodeBudget struct {
	mu   sync.Mutex
	left int
}

func (b *nodeBudget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left <= 0 {
		return false
	}
	b.left--
	return true
}

type walker struct {
	c        *Client
	budget   *nodeBudget
	maxDepth int
	maxCells int
	coords   uint32
	getAll   bool          // ask for name and child count in one call
	slots    chan struct{} // bounds the concurrent reads
	mu       sync.Mutex
	errs     []string
}

// node reads one node and, within the limits, its children. The calls
// for one node are sent together (one round trip instead of five), and
// the children are read concurrently, up to a bound shared by the walk.
func (w *walker) node(ctx context.Context, r ref, depth int) (*observe.Node, error) {
	if !w.budget.take() {
		return nil, nil
	}
	c := w.c
	callCtx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	obj := c.object(r)
	done := make(chan *dbus.Call, 6)
	role := obj.GoWithContext(callCtx, ifAccessible+".GetRoleName", 0, done)
	var props, name, count *dbus.Call
	if w.getAll {
		// Name and ChildCount in one call.
		props = obj.GoWithContext(callCtx, "org.freedesktop.DBus.Properties.GetAll", 0, done, ifAccessible)
	} else {
		name = obj.GoWithContext(callCtx, "org.freedesktop.DBus.Properties.Get", 0, done, ifAccessible, "Name")
		count = obj.GoWithContext(callCtx, "org.freedesktop.DBus.Properties.Get", 0, done, ifAccessible, "ChildCount")
	}
	state := obj.GoWithContext(callCtx, ifAccessible+".GetState", 0, done)
	ext := obj.GoWithContext(callCtx, ifComponent+".GetExtents", 0, done, w.coords)
	text := obj.GoWithContext(callCtx, ifText+".GetText", 0, done, int32(0), int32(-1))
	for _, call := range []*dbus.Call{role, props, name, count, state, ext, text} {
		if call != nil {
			<-call.Done
		}
	}
	n := &observe.Node{}
	if err := role.Store(&n.Role); err != nil {
		return nil, err
	}
	var nkids int32
	if w.getAll {
		var all map[string]dbus.Variant
		if props.Store(&all) == nil {
			n.Name, _ = all["Name"].Value().(string)
			nkids, _ = all["ChildCount"].Value().(int32)
		}
	} else {
		var v dbus.Variant
		if name.Store(&v) == nil {
			n.Name, _ = v.Value().(string)
		}
		if count.Store(&v) == nil {
			nkids, _ = v.Value().(int32)
		}
	}
	var bits []uint32
	if state.Store(&bits) == nil {
		n.States = States(bits)
	}
	var box struct{ X, Y, W, H int32 }
	if ext.Store(&box) == nil {
		n.Box = action.Box{X: int(box.X), Y: int(box.Y), W: int(box.W), H: int(box.H)}
	}
	var s string
	if text.Store(&s) == nil {
		if r := []rune(s); len(r) > maxText {
			s = string(r[:maxText])
		}
		n.Text = s
	}
	// Only the roles that carry a value are asked for one.
	if n.Text == "" && valueRoles[n.Role] {
		var v dbus.Variant
		if c.callObj(ctx, obj, "org.freedesktop.DBus.Properties.Get", &v, ifValue, "CurrentValue") == nil {
			if f, ok := v.Value().(float64); ok {
				n.Text = fmt.Sprint(f)
			}
		}
	}
	// Children are asked for only where there are some. A container
	// that manages its descendants (a table, a list or a tree view, a
	// spreadsheet's million cells) gives only the cells on the screen.
	if depth >= w.maxDepth || nkids <= 0 {
		return n, nil
	}
	if slices.Contains(n.States, "manages-descendants") {
		w.cells(ctx, obj, n, nkids, depth)
		return n, nil
	}
	if nkids > maxChildren {
		w.errorf("%s %q has %d children: not read (more than %d)", n.Role, n.Name, nkids, maxChildren)
		return n, nil
	}
	var kids []ref
	if err := obj.CallWithContext(callCtx, ifAccessible+".GetChildren", 0).Store(&kids); err != nil {
		w.errorf("children of %s %q: %v", n.Role, n.Name, err)
		return n, nil
	}
	n.Children = w.readAll(ctx, kids, n, depth+1)
	if n.Role == "combo box" && onlyObjects(n.Text) {
		n.Text = embedded(n)
	}
	return n, nil
}

// objectChar stands, in an element's text, for a child element (AT-SPI's
// hypertext): a web page's combo box is all of them.
const objectChar = '\uFFFC'

// onlyObjects reports whether text holds object characters and nothing
// else but spaces.
func onlyObjects(text string) bool {
	return strings.ContainsRune(text, objectChar) && strings.TrimSpace(strings.ReplaceAll(text, string(objectChar), "")) == ""
}

// selected is the chosen item of a list or menu (a native select's
// popup, which holds every option), or nil.
func selected(list *observe.Node) *observe.Node {
	if list.Role != "menu" && list.Role != "list" && list.Role != "list box" {
		return nil
	}
	for _, it := range list.Children {
		if it.Has("selected") {
			return it
		}
	}
	return nil
}

// embedded is n's text with each object character replaced by the text
// (else the name) of the child it stands for, in order: a combo box of a
// web page then reads as the option it shows, as it does in a browser's
// own tree.
func embedded(n *observe.Node) string {
	var b strings.Builder
	k := 0
	for _, r := range n.Text {
		if r != objectChar {
			b.WriteRune(r)
			continue
		}
		if k < len(n.Children) {
			c := n.Children[k]
			if sel := selected(c); sel != nil {
				b.WriteString(sel.Name) // a native select's list: its choice
				k++
				continue
			}
			t := c.Text
			if strings.ContainsRune(t, objectChar) {
				t = embedded(c)
			}
			if strings.TrimSpace(t) == "" {
				t = c.Name
			}
			b.WriteString(t)
		}
		k++
	}
	return strings.TrimSpace(b.String())
}

// readAll reads nodes, children of n, concurrently up to the bound shared
// by the walk, and returns those read in their order.
func (w *walker) readAll(ctx context.Context, kids []ref, n *observe.Node, depth int) []*observe.Node {
	children := make([]*observe.Node, len(kids))
	var wg sync.WaitGroup
	for i, k := range kids {
		if ctx.Err() != nil {
			break
		}
		read := func() {
			child, err := w.node(ctx, k, depth)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					w.errorf("child of %s %q: %v", n.Role, n.Name, err)
				}
				return
			}
			children[i] = child
		}
		select {
		case w.slots <- struct{}{}:
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-w.slots }()
				read()
			}()
		default:
			read() // no free slot: read it here
		}
	}
	wg.Wait()
	var out []*observe.Node
	for _, ch := range children {
		if ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// valueRoles are the roles whose nodes carry a number (Value interface).
var valueRoles = map[string]bool{"slider": true, "spin button": true, "scroll bar": true, "progress bar": true,
	"dial": true, "level bar": true, "spinbutton": true, "scrollbar": true, "progressbar": true}

// maxChildren bounds the children read from one node.
const maxChildren = 2000

// maxText bounds the text read from one node.
const maxText = 10000

func (w *walker) errorf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

func (c *Client) callObj(ctx context.Context, obj dbus.BusObject, method string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, c.CallTimeout)
	defer cancel()
	call := obj.CallWithContext(ctx, method, 0, args...)
	if call.Err != nil {
		return call.Err
	}
	return call.Store(out)
}

func (c *Client) propObj(ctx context.Context, obj dbus.BusObject, iface, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := c.callObj(ctx, obj, "org.freedesktop.DBus.Properties.Get", &v, iface, name)
	return v, err
}
