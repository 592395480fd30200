package task

// The desktop sessions of an x11 task (Environment.Session): the window
// manager alone, or a whole desktop with its panel, its desktop icons and
// its settings store.
const (
	// SessionOpenbox is openbox alone: no panel, no desktop icons, and
	// GSettings kept in memory, per process. The default.
	SessionOpenbox = "openbox"
	// SessionXFCE is XFCE: xfwm4, xfce4-panel and xfdesktop, xfconf's
	// settings (xfconf-query) and GSettings in dconf, both kept for the
	// episode.
	SessionXFCE = "xfce"
	// SessionGNOME is GNOME Shell (X11, drawn in software), GSettings in
	// dconf, kept for the episode.
	SessionGNOME = "gnome"
)

// Sessions are the sessions a task or a suite may name.
var Sessions = []string{SessionOpenbox, SessionXFCE, SessionGNOME}

// SessionPackages are the Debian packages each session needs beyond the
// desktop's own (Xvfb, openbox, D-Bus, AT-SPI): proctor setup installs
// those of the sessions a suite's tasks name.
var SessionPackages = map[string][]string{
	SessionOpenbox: nil,
	SessionXFCE: {"xfwm4", "xfce4-panel", "xfdesktop4", "xfconf", "xfce4-settings",
		"dconf-cli", "dconf-gsettings-backend"},
	SessionGNOME: {"gnome-shell", "dconf-cli", "dconf-gsettings-backend"},
}

// SessionOf is the session a task runs in: its own, else its suite's,
// else openbox.
func (s *Suite) SessionOf(t *Task) string {
	switch {
	case t.Environment.Session != "":
		return t.Environment.Session
	case s != nil && s.Session != "":
		return s.Session
	}
	return SessionOpenbox
}
