package statediff

import "github.com/bmatcuk/doublestar/v4"

// Noise is a change that says nothing of what the agent did: an
// application's cache, a recent-file list, a lock file, the harness's
// own files. A change whose kind is Kind and whose key matches Pattern
// (a glob of doublestar's: "~/.cache/**"; for processes and windows one
// where "*" is any text) is filtered, with Why.
type Noise struct {
	Kind    Kind   `json:"kind"`
	Pattern string `json:"pattern"`
	// Column, for rows (whose Pattern matches their "SERVICE/TABLE"), is
	// a glob of the columns that are noise: a row whose only changed
	// columns match is filtered, and they are left out of another's
	// changed columns. Empty: the rows themselves are noise.
	Column string `json:"column,omitempty"`
	Why    string `json:"why"`
}

// desktopNoise is the noise of a desktop (x11, and guests of its type):
// the session's and the applications' caches and bookkeeping.
var desktopNoise = []Noise{
	{File, "~/.cache", "", "caches"},
	{File, "~/.cache/**", "", "caches"},
	{File, "~/.thumbnails/**", "", "thumbnails"},
	{File, "~/.thumbnails", "", "thumbnails"},
	{File, "~/.local/share/recently-used.xbel*", "", "the recent-file list"},
	{File, "~/.local/share/gvfs-metadata/**", "", "GVfs metadata"},
	{File, "~/.local/share/gvfs-metadata", "", "GVfs metadata"},
	{File, "~/.local", "", "the data folder itself"},
	{File, "~/.local/share", "", "the data folder itself"},
	{File, "~/.local/state/**", "", "session state"},
	{File, "~/.local/state", "", "session state"},
	{File, "~/.config", "", "the settings folder itself"},
	{File, "~/.config/pulse/**", "", "the sound server's cookie"},
	{File, "~/.config/pulse", "", "the sound server's cookie"},
	{File, "~/.config/dconf/**", "", "dconf's database (GSettings is kept in memory)"},
	{File, "~/.config/dconf", "", "dconf's database (GSettings is kept in memory)"},
	{File, "~/.dbus/**", "", "the session bus's files"},
	{File, "~/.dbus", "", "the session bus's files"},
	{File, "~/.pki/**", "", "the NSS certificate database"},
	{File, "~/.pki", "", "the NSS certificate database"},
	{File, "~/.xsession-errors*", "", "the X session's log"},
	{File, "~/.ICEauthority", "", "the session manager's cookie"},
	{File, "~/.Xauthority", "", "the X server's cookie"},
	// The harness's own: the Chromium of a browser task on a desktop.
	{File, "~/.config/chromium/**", "", "the harness's Chromium profile"},
	{File, "~/.config/chromium", "", "the harness's Chromium profile"},
	// LibreOffice.
	{File, "**/.~lock.*#", "", "LibreOffice's lock file"},
	{File, "~/.config/libreoffice/*/user/backup/**", "", "LibreOffice's backups"},
	{File, "~/.config/libreoffice/*/user/extensions/**", "", "LibreOffice's extension cache"},
	{File, "~/.config/libreoffice/*/user/uno_packages/**", "", "LibreOffice's extension cache"},
	{File, "~/.config/libreoffice/*/user/temp/**", "", "LibreOffice's temporary files"},
	{File, "~/.config/libreoffice/*/user/pack/**", "", "LibreOffice's packed settings"},
	{File, "~/.config/libreoffice/*/user/registrymodifications.xcu", "", "LibreOffice's settings, with its recent documents and window places"},
	// gedit and GTK.
	{File, "~/.local/share/gedit/**", "", "gedit's metadata"},
	{File, "~/.config/gtk-3.0/bookmarks", "", "GTK's bookmarks"},
	{File, "**/*~", "", "an editor's backup file"},
	{File, "**/.goutputstream-*", "", "GLib's temporary file of a save"},
	// The session's services that its bus starts when an application asks
	// (a command's listing cannot tell them from the applications').
	{Process, "/usr/libexec/at-spi*", "", "the accessibility bus's services"},
	{Process, "dbus-daemon *", "", "the session bus"},
	{Process, "/usr/bin/dbus-daemon *", "", "the session bus"},
	{Process, "/usr/libexec/dconf-service*", "", "dconf's service"},
	{Process, "/usr/libexec/gvfsd*", "", "GVfs's services"},
}

// browserNoise is the noise of a browser's episode.
var browserNoise = []Noise{
	{File, "~/Downloads/*.crdownload", "", "a download in progress"},
}

// androidNoise is the noise of a phone's episode: what Android changes on
// its own, and the harness's own files.
var androidNoise = []Noise{
	{Setting, "system/screen_brightness", "", "adaptive brightness"},
	{Setting, "system/screen_brightness_float", "", "adaptive brightness"},
	{Setting, "global/wifi_scan_*", "", "Wi-Fi scans"},
	{File, "~/Android/data/*/cache/**", "", "apps' caches"},
	{File, "~/Android/data/*/cache", "", "apps' caches"},
	{File, "~/.thumbnails/**", "", "thumbnails"},
	{File, "~/.thumbnails", "", "thumbnails"},
	{File, "~/window_dump.xml", "", "the harness's dump of the window hierarchy"},
	{File, "/data/local/tmp/proctor-*", "", "the harness's own files"},
	// Content providers' rows (a suite's watch: content://...).
	{Row, "content://sms", "seen", "Android marks a message seen when its notification is shown"},
	{Row, "content://sms/**", "seen", "Android marks a message seen when its notification is shown"},
	{Row, "content://com.android.contacts/**", "version", "the contacts provider's revision counter"},
	{Row, "content://com.android.contacts/**", "dirty", "the contacts provider's mark for the sync adapter"},
	{Row, "content://com.android.contacts/**", "last_time_contacted", "the contacts provider's usage statistics"},
	{Row, "content://com.android.contacts/**", "times_contacted", "the contacts provider's usage statistics"},
}

// NoiseFor is the noise of an environment type.
func NoiseFor(typ string) []Noise {
	switch typ {
	case "browser":
		return browserNoise
	case "mem":
		return nil
	case "android":
		return androidNoise
	}
	return desktopNoise // x11, vnc and guests of their types
}

// filter returns why a change is noise, or "".
func filter(noise []Noise, c Change) string {
	for _, n := range noise {
		if n.Kind != c.Kind {
			continue
		}
		if c.Kind == Row {
			if n.Column == "" && matchKey(n.Pattern, c.Origin) {
				return n.Why
			}
			continue
		}
		if c.Kind == Process || c.Kind == Window {
			if matchText(n.Pattern, baseKey(c.Key)) {
				return n.Why
			}
		} else if matchKey(n.Pattern, c.Key) {
			return n.Why
		}
	}
	return ""
}

// matchKey matches a glob against a key: doublestar's globs, where "*"
// stays within a folder and "**" crosses them. A bad pattern matches
// nothing (lint refuses them in task files).
func matchKey(pattern, key string) bool {
	ok, err := doublestar.Match(pattern, key)
	return err == nil && ok
}

// ValidGlob says whether p is a valid glob.
func ValidGlob(p string) bool { return doublestar.ValidatePattern(p) }
