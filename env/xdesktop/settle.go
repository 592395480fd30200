package xdesktop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/x11"
)

// Settling. Applications draw what an action changes a little after it:
// a busy LibreOffice can show one letter of a word typed a moment before.
// So after a turn's actions Do waits until the screen has settled, and the
// observation that follows shows what the actions did. The X server
// reports what is drawn (DAMAGE, see x11.Damage); the screen has settled
// once nothing has been drawn for a quiet period, or at a cap. When
// nothing at all has been drawn lately after pointer or keyboard input,
// Do first waits a while for the application to answer. The wait is
// recorded on the turn's last step (action.Step.Settle).
//
// Settling is on by default. Config.Settle or Desktop.SetSettle changes it
// for one desktop; the environment variable PROCTOR_SETTLE=off turns it
// off for every desktop of the process (as the peers' harnesses behave
// without their fixed sleeps).

// Settle says how a desktop waits for its screen to settle after a turn.
type Settle struct {
	Off bool // do not wait: the next observation may catch the screen mid-drawing
	x11.SettleOptions
}

// DefaultSettle is the wait Do makes after every turn, chosen from what
// the suite's applications draw (measured on this desktop with the DAMAGE
// events of the root window):
//
//   - Quiet 250 ms: after typing in LibreOffice Writer, the document is
//     redrawn at once, but the toolbars and the status bar (word count)
//     follow 130 ms and a further 230 ms later; GTK's focus and hover
//     transitions draw a frame every 17 ms for about 200 ms. Carets blink
//     no faster than every 400 ms (GTK: on 800 ms, off 400 ms; LibreOffice
//     documents: every 600 ms), so a blink never keeps the screen from
//     settling: the quiet period fits between two.
//   - React 1 s: an application that takes longer than that to draw
//     anything after input is rare; a step whose input changes nothing on
//     the screen pays it whole.
//   - Cap 2 s: an animation (a spinner, a progress bar) never settles;
//     the peers' harnesses sleep up to 3 s after every action.
var DefaultSettle = Settle{SettleOptions: x11.SettleOptions{
	Quiet: 250 * time.Millisecond,
	React: time.Second,
	Cap:   2 * time.Second,
}}

// SettleEnv is the environment variable that turns settling off for every
// desktop when it is "off".
const SettleEnv = "PROCTOR_SETTLE"

// settler is one desktop's settling: the options and the DAMAGE watch,
// opened at the first turn and closed with the desktop.
type settler struct {
	mu    sync.Mutex
	cfg   Settle
	watch *x11.Damage
	err   error // why the screen cannot be watched: settling is skipped
}

// settleConfig is the settling a desktop starts with: cfg, DefaultSettle's
// waits where cfg gives none, off where PROCTOR_SETTLE=off.
func settleConfig(cfg Settle) Settle {
	if cfg.SettleOptions == (x11.SettleOptions{}) {
		cfg.SettleOptions = DefaultSettle.SettleOptions
	}
	if strings.EqualFold(os.Getenv(SettleEnv), "off") {
		cfg.Off = true
	}
	return cfg
}

func (s *settler) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch != nil {
		s.watch.Close()
		s.watch = nil
	}
}

func (s *settler) watchEnded() bool {
	if s.watch == nil {
		return false
	}
	select {
	case <-s.watch.Done():
		return true
	default:
		return false
	}
}

// SetSettle sets how the desktop waits for its screen to settle after
// each turn (Settle{Off: true}: not at all).
func (d *Desktop) SetSettle(cfg Settle) error {
	if !cfg.Off {
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	d.st.mu.Lock()
	d.st.cfg = cfg
	d.st.mu.Unlock()
	return nil
}

// isInput reports whether an action is input an application answers by
// drawing: pointer and keyboard actions, not waits, commands or answers.
func isInput(k action.Kind) bool {
	switch k {
	case action.Move, action.MoveRel, action.Click, action.Drag, action.DragRel, action.Scroll,
		action.MouseDown, action.MouseUp, action.Type, action.Key, action.Hotkey, action.KeyDown, action.KeyUp:
		return true
	}
	return false
}

// settle waits, after a turn's steps (begun at began), until the screen
// has settled, and records the wait on the last step. A desktop whose
// screen cannot be watched is not waited for: the turn goes on as without
// settling.
func (d *Desktop) settle(ctx context.Context, steps []action.Step, began time.Time) error {
	if len(steps) == 0 {
		return nil
	}
	s := &d.st
	s.mu.Lock()
	cfg := s.cfg
	if s.watchEnded() {
		s.watch = nil // the connection was lost: watch again
	}
	if !cfg.Off && s.watch == nil && s.err == nil {
		s.watch, s.err = x11.WatchDamage(d.s.display, d.s.cookie)
		if s.err != nil {
			fmt.Fprintf(d.cfg.Log, "the screen will not be waited for after each turn: %v\n", s.err)
		}
	}
	w := s.watch
	s.mu.Unlock()
	if cfg.Off || w == nil {
		return nil
	}
	o := cfg.SettleOptions
	if !isInput(steps[len(steps)-1].Action.Kind) {
		o.React = 0 // after a wait or a command nothing need answer
	}
	// Drawing since the turn began is the answer to its actions, still
	// being drawn.
	got, err := w.Settle(ctx, began, o)
	steps[len(steps)-1].Settle = got.Waited
	switch {
	case errors.Is(err, x11.ErrClosed):
		return d.alive() // the X server went: say which process exited
	case ctx.Err() != nil:
		return nil // the actions were done; the wait was cut short
	}
	return err
}
