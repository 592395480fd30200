package x11

import (
	"fmt"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Keysyms of the named keys, by Proctor's canonical key names.
var namedKeysyms = map[string]xproto.Keysym{
	"enter": 0xff0d, "tab": 0xff09, "esc": 0xff1b, "backspace": 0xff08, "delete": 0xffff,
	"up": 0xff52, "down": 0xff54, "left": 0xff51, "right": 0xff53, "home": 0xff50, "end": 0xff57,
	"pageup": 0xff55, "pagedown": 0xff56, "insert": 0xff63, "space": 0x20,
	"ctrl": 0xffe3, "shift": 0xffe1, "alt": 0xffe9, "super": 0xffeb,
	"capslock": 0xffe5, "numlock": 0xff7f, "scrolllock": 0xff14, "pause": 0xff13,
	"printscreen": 0xff61, "menu": 0xff67,
	"volumeup": 0x1008ff13, "volumedown": 0x1008ff11, "volumemute": 0x1008ff12,
}

// KeyKeysym returns the keysym of a canonical key name (see
// action.NormalizeKey): a named key, f1..f24, or a single character.
func KeyKeysym(name string) (xproto.Keysym, error) {
	if s, ok := namedKeysyms[name]; ok {
		return s, nil
	}
	var n int
	if len(name) >= 2 && name[0] == 'f' {
		if _, err := fmt.Sscanf(name[1:], "%d", &n); err == nil && n >= 1 && n <= 24 && fmt.Sprintf("f%d", n) == name {
			return xproto.Keysym(0xffbe + n - 1), nil
		}
	}
	r := []rune(name)
	if len(r) == 1 {
		return RuneKeysym(r[0]), nil
	}
	return 0, fmt.Errorf("no X keysym for key %q", name)
}

// RuneKeysym returns the keysym that types r: Latin-1 characters are their
// own keysyms, others are 0x01000000 plus the code point.
func RuneKeysym(r rune) xproto.Keysym {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d
	case r == '\t':
		return 0xff09
	case r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xff:
		return xproto.Keysym(r)
	}
	return xproto.Keysym(0x01000000 | uint32(r))
}

type keyPos struct {
	code  xproto.Keycode
	shift bool
}

// keymap maps keysyms to keycodes, and binds keysyms missing from the
// keymap to spare keycodes (those with no keysym), reusing the least
// recently bound one when all are taken.
type keymap struct {
	min, max xproto.Keycode
	perCode  byte
	syms     map[xproto.Keysym]keyPos
	shift    xproto.Keycode
	spares   []xproto.Keycode
	bound    map[xproto.Keysym]xproto.Keycode // spare bindings
	order    []xproto.Keysym                  // bindings, oldest first
}

func loadKeymap(x *xgb.Conn, setup *xproto.SetupInfo) (*keymap, error) {
	km := &keymap{min: setup.MinKeycode, max: setup.MaxKeycode, syms: map[xproto.Keysym]keyPos{},
		bound: map[xproto.Keysym]xproto.Keycode{}}
	n := byte(km.max - km.min + 1)
	r, err := xproto.GetKeyboardMapping(x, km.min, n).Reply()
	if err != nil {
		return nil, fmt.Errorf("read the keyboard mapping: %w", err)
	}
	km.perCode = r.KeysymsPerKeycode
	for i := 0; i < int(n); i++ {
		code := km.min + xproto.Keycode(i)
		row := r.Keysyms[i*int(km.perCode) : (i+1)*int(km.perCode)]
		empty := true
		for level, s := range row {
			if s == 0 {
				continue
			}
			empty = false
			if level > 1 {
				continue
			}
			if _, seen := km.syms[s]; !seen {
				km.syms[s] = keyPos{code: code, shift: level == 1}
			}
		}
		if empty {
			km.spares = append(km.spares, code)
		}
	}
	sh, ok := km.syms[0xffe1]
	if !ok {
		return nil, fmt.Errorf("the keyboard mapping has no Shift_L key")
	}
	km.shift = sh.code
	return km, nil
}

// lookup finds the keycode for sym, binding a spare keycode if needed.
func (km *keymap) lookup(x *xgb.Conn, sym xproto.Keysym) (xproto.Keycode, bool, error) {
	if p, ok := km.syms[sym]; ok {
		return p.code, p.shift, nil
	}
	if code, ok := km.bound[sym]; ok {
		return code, false, nil
	}
	if len(km.spares) == 0 && len(km.order) == 0 {
		return 0, false, fmt.Errorf("no spare keycode to bind keysym %#x", uint32(sym))
	}
	var code xproto.Keycode
	if len(km.spares) > 0 {
		code, km.spares = km.spares[0], km.spares[1:]
	} else {
		old := km.order[0]
		km.order = km.order[1:]
		code = km.bound[old]
		delete(km.bound, old)
	}
	row := make([]xproto.Keysym, km.perCode)
	for i := range row {
		row[i] = sym
	}
	if err := xproto.ChangeKeyboardMappingChecked(x, 1, code, km.perCode, row).Check(); err != nil {
		return 0, false, fmt.Errorf("bind keysym %#x to keycode %d: %w", uint32(sym), code, err)
	}
	km.bound[sym] = code
	km.order = append(km.order, sym)
	return code, false, nil
}

// restore unbinds the spare keycodes this connection bound.
func (km *keymap) restore(x *xgb.Conn) {
	row := make([]xproto.Keysym, km.perCode)
	for _, code := range km.bound {
		_ = xproto.ChangeKeyboardMappingChecked(x, 1, code, km.perCode, row).Check()
	}
	km.bound = map[xproto.Keysym]xproto.Keycode{}
	km.order = nil
}
