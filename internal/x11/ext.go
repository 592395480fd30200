package x11

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	// The extensions whose event and error constructors are registered.
	_ "github.com/jezek/xgb/damage"
	_ "github.com/jezek/xgb/res"
	_ "github.com/jezek/xgb/shm"
	_ "github.com/jezek/xgb/xtest"
)

// Extensions. xgb's own Init functions (damage.Init, shm.Init, ...) write
// the event and error constructors of an extension into package-level
// maps at every call, while the reader goroutine of every other open
// connection reads those maps: with several desktops in one process that
// is a data race. So each connection looks its extensions up itself
// (initExt: the per-connection opcode only), and the package-level maps
// are written once, by the first connection of the process, before any
// other exists. The event and error numbers an extension gets depend on
// the order the server loaded its extensions in, which is the same for
// every Xvfb of one build, the only X server this package drives.

// extensions are the extensions this package uses, by X name.
var extensions = []string{"XTEST", "MIT-SHM", "DAMAGE", "X-Resource"}

var registerOnce sync.Once

// registerExtensions writes the event and error constructors of every
// extension the server has into xgb's maps, once per process.
func registerExtensions(x *xgb.Conn) {
	registerOnce.Do(func() {
		for _, name := range extensions {
			r, err := xproto.QueryExtension(x, uint16(len(name)), name).Reply()
			if err != nil || !r.Present {
				continue
			}
			for n, fun := range xgb.NewExtEventFuncs[name] {
				xgb.NewEventFuncs[int(r.FirstEvent)+n] = fun
			}
			for n, fun := range xgb.NewExtErrorFuncs[name] {
				xgb.NewErrorFuncs[int(r.FirstError)+n] = fun
			}
		}
	})
}

// initExt makes an extension's requests usable on x: it records the
// extension's major opcode on the connection, as the extension's Init
// does, without touching xgb's package-level maps.
func initExt(x *xgb.Conn, name string) error {
	registerExtensions(x)
	r, err := xproto.QueryExtension(x, uint16(len(name)), name).Reply()
	if err != nil {
		return err
	}
	if !r.Present {
		return fmt.Errorf("the X server has no %s extension", name)
	}
	x.ExtLock.Lock()
	x.Extensions[name] = r.MajorOpcode
	x.ExtLock.Unlock()
	return nil
}
