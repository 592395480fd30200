// Package all registers every environment provider, in the order --help
// and messages list them. A command imports it for its side effect; a new
// backend is one package and one line here.
package all

import (
	"github.com/proctor-eval/proctor/env/android"
	"github.com/proctor-eval/proctor/env/browser"
	"github.com/proctor-eval/proctor/env/kube"
	"github.com/proctor-eval/proctor/env/mem"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/env/remote"
	"github.com/proctor-eval/proctor/env/vnc"
	"github.com/proctor-eval/proctor/env/xdesktop"
)

func init() {
	provider.Register(
		xdesktop.Provider(), // local
		remote.Provider(),   // guest=
		browser.Provider(),  // browser
		vnc.Provider(),      // vnc://
		android.Provider(),  // android
		mem.Provider(),      // mem
		kube.Provider(),     // kube://
	)
}
