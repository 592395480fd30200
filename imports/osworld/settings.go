package osworld

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/proctor-eval/proctor/check"
)

// The metrics here read a configuration file (VS Code's settings and
// key bindings, Chromium's profile, VLC's vlcrc, a JSON file) or a
// command's output the way OSWorld's functions of the same names read
// it, written as predicate checks (package check's expressions) over the
// file's text, or its JSON (value), so that the check gives the
// function's verdict where it gives 1.

// exprString is s as an expression's string literal.
func exprString(s string) string { return strconv.Quote(s) }

// exprJSON is v as an expression's value: the JSON decoded, as the
// probe's JSON is.
func exprJSON(v any) (string, string) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err.Error()
	}
	return "fromJSON(" + exprString(string(b)) + ")", ""
}

// exprEqual is the expression that x (an expression) equals v as Python
// compares JSON values: the same JSON, maps' keys in any order.
func exprEqual(x string, v any) (string, string) {
	lit, why := exprJSON(v)
	if why != "" {
		return "", why
	}
	return "toJSON(" + x + ") == toJSON(" + lit + ")", ""
}

// exprIndex is x[key] as an expression.
func exprIndex(x, key string) string { return x + "[" + exprString(key) + "]" }

// exprHas is the expression that x is a map holding key.
func exprHas(x, key string) string {
	return "(type(" + x + `) == "map" && ` + exprString(key) + " in " + x + ")"
}

// exprGet is Python's chain x.get(k1, {}).get(k2, {})...get(kn, def),
// whose failure (a value on the way that is not a map) gives def, as the
// getters that use it return their default when it raises.
func exprGet(x string, keys []string, def string) string {
	// Each level absent gives {} to the next, whose absent key gives the
	// default in the end: a key missing anywhere, or a value on the way
	// that is not a map, is the default.
	var path []string
	cur := x
	for _, k := range keys {
		path = append(path, exprHas(cur, k))
		cur = exprIndex(cur, k)
	}
	return "(" + strings.Join(path, " && ") + " ? " + cur + " : " + def + ")"
}

// truthy is Python's truth of the expression x's value.
func truthy(x string) string {
	return "(" + x + " != nil && " + x + " != false && " + x + ` != 0 && ` + x + ` != "" && !(type(` + x + `) in ["array", "map"] && len(` + x + `) == 0))`
}

func predicate(p *check.Probe, expr string) check.Spec {
	return check.Spec{Kind: check.Predicate, Probe: p, Expr: expr}
}

// vmFile is the probe of a result that is a file of the desktop.
func (c *converter) vmFile(result *Getter) (*check.Probe, string) {
	if result == nil || result.Type != "vm_file" {
		return nil, "a result that is not a file"
	}
	return c.probe(result)
}

// ruleValue is the expected rule's value of key.
func ruleValue(expected *Getter, key string) (any, string) {
	return rule(expected, key)
}

// jsonSettings: check_json_settings, VS Code's settings.json (JSON) holds
// each expected key with the expected value.
func jsonSettings(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	m, ok := want.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, "expected settings that are not an object"
	}
	parts := []string{`type(value) == "map"`}
	for _, k := range sortedKeys(m) {
		eq, why := exprEqual(exprIndex("value", k), m[k])
		if why != "" {
			return nil, why
		}
		parts = append(parts, exprString(k)+" in value && "+eq)
	}
	return []check.Spec{predicate(p, strings.Join(parts, " && "))}, ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonKeybindings: check_json_keybindings, VS Code's keybindings.json (a
// JSON list, read whole or, when that is not a list, without its first
// line, the comment VS Code writes) holds the expected binding.
func jsonKeybindings(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	eq, why := exprEqual("#", want)
	if why != "" {
		return nil, why
	}
	e := `let data = type(value) == "array" ? value : fromJSON(join(split(text, "\n")[1:], "\n")); ` +
		`type(data) == "array" && any(data, ` + eq + `)`
	return []check.Spec{predicate(p, e)}, ""
}

// exprSubset is OSWorld's _is_subset(want, x): a map's keys each in x
// with a subset value, anything else equal.
func exprSubset(x string, want any) (string, string) {
	m, ok := want.(map[string]any)
	if !ok {
		return exprEqual(x, want)
	}
	parts := []string{"type(" + x + `) == "map"`}
	for _, k := range sortedKeys(m) {
		sub, why := exprSubset(exprIndex(x, k), m[k])
		if why != "" {
			return "", why
		}
		parts = append(parts, exprString(k)+" in "+x+" && "+sub)
	}
	return "(" + strings.Join(parts, " && ") + ")", ""
}

// compareConfig: compare_config with its default containment_ok, a file
// of the desktop whose JSON holds the expected JSON (a subset: maps'
// keys with subset values, anything else equal), or, when either text is
// not JSON, whose text holds the expected text, spaces around it aside.
func compareConfig(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	for k, v := range opts {
		if k == "containment_ok" && v == true {
			continue
		}
		return nil, "option " + k
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	s, ok := want.(string)
	if !ok || s == "" {
		return nil, "an expected value that is not a text"
	}
	contains := "text contains " + exprString(strings.TrimSpace(s))
	var wantJSON any
	if json.Unmarshal([]byte(s), &wantJSON) != nil {
		return []check.Spec{predicate(p, contains)}, ""
	}
	sub, why := exprSubset("value", wantJSON)
	if why != "" {
		return nil, why
	}
	// The probe's value is its JSON, else its text.
	e := `type(value) == "string" && value == text ? ` + contains + " : " + sub
	return []check.Spec{predicate(p, e)}, ""
}

// extensionInstalled: is_extension_installed, the command's output holds
// (contain) or lacks (not_contain) the expected string.
func extensionInstalled(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	typ, why := ruleValue(expected, "type")
	if why != "" {
		return nil, why
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	s, ok := want.(string)
	if !ok {
		return nil, "an expected value that is not a string"
	}
	switch typ {
	case "contain":
		return []check.Spec{{Kind: check.Contains, Probe: p, Value: s, CaseSense: true}}, ""
	case "not_contain":
		return []check.Spec{{Kind: check.NotContains, Probe: p, Value: s, CaseSense: true}}, ""
	}
	return nil, fmt.Sprintf("rule type %v", typ)
}

// chromiumProfile is the folder of the desktop's Chromium profile, where
// OSWorld's getters read Chrome's (~/.config/google-chrome/Default).
const chromiumProfile = "~/.config/chromium/Default/"

// chromeValues are the getters that read a value of Chromium's
// Preferences, each as an expression over the file's JSON (value), with
// the getter's fallback where it has one.
var chromeValues = map[string]string{
	// data.get('enable_do_not_track', {}) as "true" or "false"; "false"
	// when the file is not JSON.
	"enable_do_not_track": `(` + truthy(exprGet("value", []string{"enable_do_not_track"}, "nil")) + ` ? "true" : "false")`,
	// data.get('profile', {}).get('name'); None when that fails.
	"profile_name": exprGet("value", []string{"profile", "name"}, "nil"),
	// default_search_provider_data.template_url_data.short_name, else
	// "Google".
	"default_search_engine": exprGet("value", []string{"default_search_provider_data", "template_url_data", "short_name"}, `"Google"`),
	// "true" when sites' data is deleted on close (the cookies content
	// setting 4, session only), else "false"; a profile without
	// "profile" is "Google", the getter's fallback. OSWorld's getter
	// tests only that profile.default_content_setting_values is there,
	// which Debian's Chromium writes in every profile (a migration mark):
	// the setting itself is what its test stood for.
	"data_delete_automacally": `(` + exprHas("value", "profile") + ` ? (` +
		exprGet("value", []string{"profile", "default_content_setting_values", "cookies"}, "nil") + ` == 4 ? "true" : "false") : "Google")`,
}

// chromeValue is a Chromium profile getter's probe and expression.
func chromeValue(g *Getter) (*check.Probe, string, bool) {
	if g == nil {
		return nil, "", false
	}
	e, ok := chromeValues[g.Type]
	if !ok {
		return nil, "", false
	}
	return &check.Probe{File: chromiumProfile + "Preferences"}, e, true
}

// exactChrome: exact_match of a value of Chromium's profile.
func exactChrome(p *check.Probe, x string, expected *Getter) ([]check.Spec, string) {
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	s, ok := want.(string)
	if !ok {
		return nil, "an expected value that is not a string"
	}
	return []check.Spec{predicate(p, x+" == "+exprString(s))}, ""
}

// fontSize: check_font_size of chrome_font_size, Chromium's default font
// size (webkit.webprefs.default_font_size, 16 where the profile has no
// webprefs) equal to the rule's value, or strictly between its min and
// max.
func fontSize(_ *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "chrome_font_size" {
		return nil, "a result that is not chrome_font_size"
	}
	typ, why := ruleValue(expected, "type")
	if why != "" {
		return nil, why
	}
	prefs := exprGet("value", []string{"webkit", "webprefs"}, "nil")
	size := `(` + prefs + ` == nil ? 16 : ` + exprGet("value", []string{"webkit", "webprefs", "default_font_size"}, "nil") + `)`
	var e string
	switch typ {
	case "value":
		v, ok := expected.Rules["value"].(float64)
		if !ok {
			return nil, "a value rule without a number"
		}
		e = size + " == " + strconv.FormatFloat(v, 'g', -1, 64)
	case "range":
		lo, ok1 := expected.Rules["min"].(float64)
		hi, ok2 := expected.Rules["max"].(float64)
		if !ok1 || !ok2 {
			return nil, "a range rule without min and max numbers"
		}
		e = "let s = " + size + "; s != nil && " + strconv.FormatFloat(lo, 'g', -1, 64) + " < s && s < " + strconv.FormatFloat(hi, 'g', -1, 64)
	default:
		return nil, fmt.Sprintf("rule type %v", typ)
	}
	return []check.Spec{predicate(&check.Probe{File: chromiumProfile + "Preferences"}, e)}, ""
}

// favoriteApps: check_gnome_favorite_apps, the list gsettings prints
// (Python's literal, as OSWorld evaluates it) holds the expected apps, as
// many as expected, in any order.
func favoriteApps(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.probe(result)
	if why != "" {
		return nil, why
	}
	if p.Command == "" {
		return nil, "a result that is not a command's output"
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	list, ok := want.([]any)
	if !ok {
		return nil, "an expected value that is not a list"
	}
	lit, why := exprJSON(list)
	if why != "" {
		return nil, why
	}
	// gsettings prints strings in single quotes (an empty list as
	// "@as []", which Python cannot read: no pass).
	e := `let t = trim(text); let apps = hasPrefix(t, "[") ? fromJSON(replace(t, "'", "\"")) : nil; let want = ` + lit +
		`; type(apps) == "array" && len(apps) == len(want) && all(apps, # in want) && all(want, # in apps)`
	return []check.Spec{predicate(p, e)}, ""
}

// matchInList: match_in_list, the result is one of the expected values
// (a value of Chromium's profile).
func matchInList(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, x, ok := chromeValue(result)
	if !ok {
		t := "none"
		if result != nil {
			t = result.Type
		}
		return nil, "result " + t
	}
	want, why := ruleValue(expected, "expected")
	if why != "" {
		return nil, why
	}
	list, ok := want.([]any)
	if !ok {
		return nil, "an expected value that is not a list"
	}
	lit, why := exprJSON(list)
	if why != "" {
		return nil, why
	}
	return []check.Spec{predicate(p, x+" in "+lit)}, ""
}

// expectedBookmarks: is_expected_bookmarks, the folders' names (or the
// pages' URLs) on Chromium's bookmark bar are the expected set.
func expectedBookmarks(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "bookmarks" {
		return nil, "a result that is not the bookmarks"
	}
	typ, why := ruleValue(expected, "type")
	if why != "" {
		return nil, why
	}
	var kind, field, key string
	switch typ {
	case "bookmark_bar_folders_names":
		kind, field, key = "folder", "name", "names"
	case "bookmark_bar_websites_urls":
		kind, field, key = "url", "url", "urls"
	default:
		return nil, fmt.Sprintf("rule type %v", typ)
	}
	want, why := ruleValue(expected, key)
	if why != "" {
		return nil, why
	}
	list, ok := want.([]any)
	if !ok {
		return nil, "expected " + key + " that are not a list"
	}
	lit, why := exprJSON(list)
	if why != "" {
		return nil, why
	}
	// The roots empty (no bookmarks) give 0, as does a bar without
	// children (Python's KeyError).
	e := `let roots = ` + exprGet("value", []string{"roots"}, "{}") + `; ` +
		`let want = ` + lit + `; ` +
		`len(roots) > 0 && (let got = map(filter(roots.bookmark_bar.children, #.type == ` + exprString(kind) + `), #.` + field + `); ` +
		`all(got, # in want) && all(want, # in got))`
	return []check.Spec{predicate(&check.Probe{File: chromiumProfile + "Bookmarks"}, e)}, ""
}

// runSQLite: run_sqlite3, the query on the database file gives a first
// row whose one value is 1 (the score OSWorld's function gives: the
// value, or 0 when it is null).
func runSQLite(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	sql, why := ruleValue(expected, "sql")
	if why != "" {
		return nil, why
	}
	q, ok := sql.(string)
	if !ok || q == "" {
		return nil, "a rule whose sql is not a query"
	}
	p.Read, p.Query = "sqlite", q
	// The rows are objects by column name: the query's one column is
	// the row's one value.
	return []check.Spec{predicate(p, `len(value) > 0 && len(value[0]) == 1 && values(value[0])[0] == 1`)}, ""
}

// checkJSON: check_json of a JSON file (not YAML), each expect rule's
// key path present with a value matching by the rule's method: eq or ne
// (JSON equality), re with its flags (a Python pattern read as Go's,
// searched in a string).
func checkJSON(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	for k, v := range opts {
		if k == "is_yaml" && v == false {
			continue
		}
		return nil, "option " + k
	}
	p, why := c.vmFile(result)
	if why != "" {
		return nil, why
	}
	if expected == nil || expected.Type != "rule" {
		return nil, "expected that is not a rule"
	}
	if _, ok := expected.Rules["unexpect"]; ok {
		return nil, "unexpect rules"
	}
	rules, _ := expected.Rules["expect"].([]any)
	if len(rules) == 0 {
		return nil, "no expect rules"
	}
	var parts []string
	for i, r := range rules {
		m, _ := r.(map[string]any)
		keys := words(m["key"])
		if len(keys) == 0 {
			return nil, fmt.Sprintf("expect[%d] without a key", i)
		}
		x, path := "value", []string{}
		for _, k := range keys {
			path = append(path, exprHas(x, k))
			x = exprIndex(x, k)
		}
		method := str(m["method"])
		switch {
		case method == "eq" || method == "ne":
			eq, why := exprEqual(x, m["ref"])
			if why != "" {
				return nil, why
			}
			if method == "ne" {
				eq = "!(" + eq + ")"
			}
			path = append(path, eq)
		case method == "re" || strings.HasPrefix(method, "re."):
			re, why := pythonPattern(str(m["ref"]), strings.Split(method, ".")[1:])
			if why != "" {
				return nil, fmt.Sprintf("expect[%d]: %s", i, why)
			}
			path = append(path, `type(`+x+`) == "string" && `+x+" matches "+exprString(re))
		default:
			return nil, fmt.Sprintf("expect[%d]: method %s", i, method)
		}
		parts = append(parts, strings.Join(path, " && "))
	}
	return []check.Spec{predicate(p, strings.Join(parts, " && "))}, ""
}

// pythonPattern is a Python pattern with re's flags (I, M, S) as Go's
// pattern; one Go refuses is not supported.
func pythonPattern(ref string, flags []string) (string, string) {
	var f string
	for _, fl := range flags {
		switch fl {
		case "I", "IGNORECASE":
			f += "i"
		case "M", "MULTILINE":
			f += "m"
		case "S", "DOTALL":
			f += "s"
		default:
			return "", "re flag " + fl
		}
	}
	if f != "" {
		ref = "(?" + f + ")" + ref
	}
	if _, err := regexp.Compile(ref); err != nil {
		return "", err.Error()
	}
	return ref, ""
}

// vlcrc is VLC's configuration file, which the vlc_config getter reads.
const vlcrc = "~/.config/vlc/vlcrc"

// vlcLast is the value OSWorld's VLC metrics read: of the last line
// holding key (comments too), what follows its last "=", spaces aside;
// def when no line holds it.
func vlcLast(key, def string) string {
	return `(let ls = filter(split(text, "\n"), # contains ` + exprString(key) + `); ` +
		`len(ls) == 0 ? ` + exprString(def) + ` : trim(last(split(last(ls), "="))))`
}

// vlcSetting: one of OSWorld's check_qt_* and VLC setting metrics, the
// setting's value (its default when vlcrc does not name it) equals the
// expected one.
func vlcSetting(key, def, rule string) metric {
	return func(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
		if len(opts) > 0 {
			return nil, "options"
		}
		if result == nil || result.Type != "vlc_config" {
			return nil, "a result that is not VLC's configuration"
		}
		want, why := ruleValue(expected, rule)
		if why != "" {
			return nil, why
		}
		s := str(want)
		if _, isStr := want.(string); !isStr && s == "" {
			return nil, "an expected value that is not a string or a number"
		}
		var x string
		if key == "global-key-play-pause" {
			// Set (1) when the value is not empty; unset (0) when no
			// line names it.
			x = `(` + vlcLast(key+"=", "") + ` == "" ? "0" : "1")`
		} else {
			x = vlcLast(key+"=", def)
		}
		return []check.Spec{predicate(&check.Probe{File: vlcrc}, x+" == "+exprString(s))}, ""
	}
}

// vlcSliderColours: check_qt_slider_colours, the slider's colours
// (qt-slider-colours, "r;g;b;..." with VLC's default) match the expected
// string, or are blackish: each channel of every whole colour under 100.
func vlcSliderColours(c *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vlc_config" {
		return nil, "a result that is not VLC's configuration"
	}
	typ, why := ruleValue(expected, "type")
	if why != "" {
		return nil, why
	}
	x := vlcLast("qt-slider-colours", "153;210;153;20;210;20;255;199;15;245;39;29")
	var e string
	switch typ {
	case "match":
		want, why := ruleValue(expected, "expected_qt_slider_colours")
		if why != "" {
			return nil, why
		}
		e = x + " == " + exprString(str(want))
	case "blackish":
		e = `let vs = map(split(` + x + `, ";"), int(trim(#))); all(take(vs, int(len(vs) / 3) * 3), # < 100)`
	default:
		return nil, fmt.Sprintf("rule type %v", typ)
	}
	return []check.Spec{predicate(&check.Probe{File: vlcrc}, e)}, ""
}

func init() {
	for name, m := range map[string]metric{
		"check_json_settings":         jsonSettings,
		"check_json_keybindings":      jsonKeybindings,
		"compare_config":              compareConfig,
		"is_extension_installed":      extensionInstalled,
		"match_in_list":               matchInList,
		"check_font_size":             fontSize,
		"check_gnome_favorite_apps":   favoriteApps,
		"is_expected_bookmarks":       expectedBookmarks,
		"run_sqlite3":                 runSQLite,
		"check_json":                  checkJSON,
		"check_qt_bgcone":             vlcSetting("qt-bgcone", "1", "expected_qt_bgcone"),
		"check_qt_max_volume":         vlcSetting("qt-max-volume", "125", "expected_qt_max_volume"),
		"check_qt_minimal_view":       vlcSetting("qt-minimal-view", "0", "expected_qt_minimal_view"),
		"check_qt_slider_colours":     vlcSliderColours,
		"check_global_key_play_pause": vlcSetting("global-key-play-pause", "0", "expected_global_key_play_pause"),
		"check_one_instance_when_started_from_file": vlcSetting("one-instance-when-started-from-file", "1",
			"expected_one_instance_when_started_from_file"),
		"check_play_and_exit": vlcSetting("play-and-exit", "0", "expected_play_and_exit"),
	} {
		metrics[name] = m
	}
}
