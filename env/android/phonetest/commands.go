package phonetest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/observe"
)

// words splits a command line as the device's sh does for the commands
// that take quoted arguments (am start, content query): words apart at
// blanks, '...' taken as it is, "..." with \ escaping " \ $ and `, and \
// escaping one character outside quotes. ok is false for an unterminated
// quote.
func words(s string) (out []string, ok bool) {
	var cur strings.Builder
	in := false // a word has begun (it may be empty: '')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, true
}

// shortActivity writes an activity of pkg as Android shows it in a
// component: ".wifi.WifiSettings" for com.android.settings.wifi.WifiSettings.
func shortActivity(pkg, activity string) string {
	if rest, ok := strings.CutPrefix(activity, pkg+"."); ok {
		return "." + rest
	}
	return activity
}

// amStart answers `am start [-W] [-n PACKAGE/ACTIVITY] [-a ACTION]
// [-d URI] [-p PACKAGE] [-c CATEGORY] [--es KEY VALUE]...`: it brings the
// activity named, or the start screen of the app that answers the
// action, to the front, and prints what Android 14's am prints.
func (ph *Phone) amStart(args []string) (observe.CommandResult, bool) {
	var comp, act, data, pkg string
	wait := false
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a := args[i]; {
		case a == "-W":
			wait = true
		case a == "-n":
			comp = next()
		case a == "-a":
			act = next()
		case a == "-d":
			data = next()
		case a == "-p":
			pkg = next()
		case a == "-c" || a == "-t" || a == "-f" || a == "--user":
			next()
		case strings.HasPrefix(a, "--e"): // --es KEY VALUE, --ei, --ez ...
			next()
			next()
		case strings.HasPrefix(a, "-"):
		default:
			if data == "" {
				data = a // am start URI
			}
		}
	}
	var desc []string
	if act != "" {
		desc = append(desc, "act="+act)
	}
	if data != "" {
		desc = append(desc, "dat="+data)
	}
	if pkg != "" {
		desc = append(desc, "pkg="+pkg)
	}
	fail := func(msg string) (observe.CommandResult, bool) {
		return observe.CommandResult{Stdout: "Starting: Intent { " + strings.Join(desc, " ") + " }\n", Stderr: msg + "\n", ExitCode: 1}, true
	}
	var screen *Screen
	switch {
	case comp != "":
		p, activity, found := strings.Cut(comp, "/")
		if !found || activity == "" {
			return observe.CommandResult{Stderr: "Error: Bad component name: " + comp + "\n", ExitCode: 1}, true
		}
		activity = shortActivity(p, activity)
		desc = append(desc, "cmp="+p+"/"+activity)
		full := activity
		if strings.HasPrefix(full, ".") {
			full = p + full
		}
		a, installed := ph.apps[p]
		if installed {
			if open, ok := a.Activities[activity]; ok {
				screen = open(ph)
			} else if s := a.Start(ph); s.Activity == activity {
				screen = s
			}
		}
		if screen == nil {
			return fail("Error type 3\nError: Activity class {" + p + "/" + full + "} does not exist.")
		}
	case act != "":
		for _, name := range slices.Sorted(maps.Keys(ph.apps)) {
			a := ph.apps[name]
			if slices.Contains(a.Actions, act) && (pkg == "" || pkg == name) {
				screen = a.Start(ph)
				break
			}
		}
		if screen == nil {
			return fail("Error: Activity not started, unable to resolve Intent { " + strings.Join(desc, " ") + " flg=0x10000000 }")
		}
	default:
		return observe.CommandResult{Stderr: "Error: Intent does not match any activities: Intent { }\n", ExitCode: 1}, true
	}
	ph.cur = screen
	started := screen.Package + "/" + screen.Activity
	ph.Started = append(ph.Started, started)
	out := "Starting: Intent { " + strings.Join(desc, " ") + " }\n"
	if wait {
		out += "Status: ok\nLaunchState: COLD\nActivity: " + started + "\nTotalTime: 312\nWaitTime: 315\nComplete\n"
	}
	return observe.CommandResult{Stdout: out}, true
}

// APK makes the stand-in's APK of an app: a zip holding an
// AndroidManifest.xml that names its package and label. A real APK's
// manifest is binary XML; this one is text, which the scripted phone's
// pm install reads. Installed, the app opens on a screen that shows its
// label.
func APK(pkg, label string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, _ := z.Create("AndroidManifest.xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="%s">
  <application android:label="%s"><activity android:name=".MainActivity" /></application>
</manifest>
`, pkg, label)
	z.Close()
	return b.Bytes()
}

var (
	manifestPackage = regexp.MustCompile(`<manifest[^>]*\spackage="([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+)"`)
	manifestLabel   = regexp.MustCompile(`android:label="([^"]*)"`)
)

// pmInstall answers `pm install [-r] [-t] [-g] [-d] PATH` for a file in
// the phone's storage made by APK: the app is installed (then listed by
// pm list packages, and opened by monkey and am start).
func (ph *Phone) pmInstall(args []string) (observe.CommandResult, bool) {
	replace, path := false, ""
	for _, a := range args {
		switch a = strings.Trim(a, "'"); {
		case a == "-r":
			replace = true
		case strings.HasPrefix(a, "-"):
		default:
			path = a
		}
	}
	failure := func(msg string) (observe.CommandResult, bool) {
		return observe.CommandResult{Stdout: "Failure [" + msg + "]\n", ExitCode: 1}, true
	}
	l, ok := ph.local(path)
	if path == "" || !ok {
		return observe.CommandResult{Stderr: "Error: Can't open file: " + path + "\n", ExitCode: 1}, true
	}
	b, err := os.ReadFile(l)
	if err != nil {
		return observe.CommandResult{Stderr: "Error: Can't open file: " + path + "\n", ExitCode: 1}, true
	}
	manifest := ""
	if z, err := zip.NewReader(bytes.NewReader(b), int64(len(b))); err == nil {
		for _, f := range z.File {
			if f.Name == "AndroidManifest.xml" {
				if r, err := f.Open(); err == nil {
					m, _ := io.ReadAll(r)
					r.Close()
					manifest = string(m)
				}
			}
		}
	}
	m := manifestPackage.FindStringSubmatch(manifest)
	if m == nil {
		return failure("INSTALL_PARSE_FAILED_NOT_APK: Failed parse during installPackageLI: " + path + " is not an APK the scripted phone reads")
	}
	pkg, label := m[1], pkg0(manifestLabel.FindStringSubmatch(manifest))
	if _, there := ph.apps[pkg]; there && !replace {
		return failure("INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install " + pkg + " without first uninstalling.")
	}
	if label == "" {
		label = pkg
	}
	ph.apps[pkg] = App{Package: pkg, Start: func(ph *Phone) *Screen {
		return &Screen{Package: pkg, Activity: ".MainActivity", Color: color.RGBA{235, 245, 235, 255},
			Nodes: []*Node{{Class: "android.widget.TextView", Text: label, Box: image.Rect(40, 120, ph.W-40, 260)}}}
	}}
	return observe.CommandResult{Stdout: "Success\n"}, true
}

func pkg0(m []string) string {
	if len(m) < 2 {
		return ""
	}
	return m[1]
}

// settingsTables are the tables of content://settings.
var settingsTables = []string{"system", "secure", "global"}

// contentQuery answers `content query --uri content://settings/TABLE[/NAME]
// [--projection COL:COL] [--where "name='NAME'"]` from the phone's
// settings, in the content tool's format: "Row: 0 _id=3, name=wifi_on,
// value=1", or "No result found." Like Android's SettingsProvider, it
// takes a where clause of the form name='NAME' only. content reads the
// arguments and passes the settings' addresses here.
func (ph *Phone) contentQuery(uri, where string, projection []string) (observe.CommandResult, bool) {
	providerErr := func(msg string) (observe.CommandResult, bool) {
		return observe.CommandResult{Stderr: "Error while accessing provider:settings\njava.lang.IllegalArgumentException: " + msg + "\n", ExitCode: 1}, true
	}
	table, name, _ := strings.Cut(strings.TrimPrefix(uri, "content://settings/"), "/")
	if !slices.Contains(settingsTables, table) || strings.Contains(name, "/") {
		return providerErr("Invalid Uri path:" + uri)
	}
	if where != "" {
		m := whereName.FindStringSubmatch(where)
		if m == nil || name != "" {
			return providerErr("Supported SQL:\n  uri content://some_table/some_property with null where and where args\n" +
				"  uri content://some_table with query name=some_name and null args\n  but got - uri:" + uri + ", where:" + where + " whereArgs:null")
		}
		name = m[1] + m[2]
	}
	var names []string
	for k := range ph.Settings {
		if n, ok := strings.CutPrefix(k, table+"/"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	cols := []string{"_id", "name", "value"}
	if len(projection) > 0 {
		for _, c := range projection {
			if !slices.Contains(cols, c) {
				return providerErr("Invalid column: " + c)
			}
		}
		cols = projection
	}
	var b strings.Builder
	row := 0
	for i, n := range names {
		if name != "" && n != name {
			continue
		}
		vals := map[string]string{"_id": fmt.Sprint(i + 1), "name": n, "value": ph.Settings[table+"/"+n]}
		var parts []string
		for _, c := range cols {
			parts = append(parts, c+"="+vals[c])
		}
		fmt.Fprintf(&b, "Row: %d %s\n", row, strings.Join(parts, ", "))
		row++
	}
	if row == 0 {
		b.WriteString("No result found.\n")
	}
	return observe.CommandResult{Stdout: b.String()}, true
}

// whereName is the where clause SettingsProvider takes without
// arguments: name='NAME' or name="NAME", in brackets or not.
var whereName = regexp.MustCompile(`^\s*\(?\s*name\s*=\s*(?:'([^']*)'|"([^"]*)")\s*\)?\s*$`)
