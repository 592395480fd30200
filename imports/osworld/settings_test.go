package osworld

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"image"
	gopng "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"

	_ "modernc.org/sqlite"
)

// verdicts imports a task of the evaluator (JSON) and runs its checks on
// each case's files and command outputs: the verdict must be the one
// OSWorld's function gives (1: pass).
func verdicts(t *testing.T, name, evaluator string, cases []verdictCase) {
	t.Helper()
	var e Evaluator
	if err := json.Unmarshal([]byte(evaluator), &e); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	it := Import(&File{ID: "t", Instruction: "do it", Evaluator: e}, "os", "t.json", "", "")
	if len(it.Reasons) > 0 {
		t.Fatalf("%s: not imported: %v", name, it.Reasons)
	}
	checks, err := check.CompileAll(it.Task.Checks, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, tc := range cases {
		ev := &check.Recorded{Files: map[string][]byte{}, Commands: map[string]observe.CommandResult{}, AssetDir: t.TempDir()}
		for p, s := range tc.files {
			name, asset := strings.CutPrefix(p, assetKey)
			if !asset {
				ev.Files[p] = []byte(s)
				continue
			}
			f := filepath.Join(ev.AssetDir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for cmd, out := range tc.outputs {
			ev.Commands[cmd] = observe.CommandResult{Stdout: out}
		}
		pass := true
		var why []string
		for _, c := range checks.Checks {
			r := c.Evaluate(context.Background(), ev, nil)
			if r.Err != "" {
				t.Errorf("%s, %s: error %s", name, tc.name, r.Err)
			}
			pass = pass && r.Pass
			why = append(why, r.Reason)
		}
		if pass != tc.pass {
			t.Errorf("%s, %s: pass %v, want %v (%s; checks %+v)", name, tc.name, pass, tc.pass, strings.Join(why, "; "), it.Task.Checks)
		}
	}
}

type verdictCase struct {
	name    string
	files   map[string]string
	outputs map[string]string
	pass    bool
}

// assetKey begins a case's file that is the suite's asset of the name
// that follows, not the desktop's.
const assetKey = "asset:"

func TestVSCodeMetrics(t *testing.T) {
	const settings = "~/.config/Code/User/settings.json"
	verdicts(t, "check_json_settings", `{"func":"check_json_settings","expected":{"type":"rule","rules":{"expected":{"editor.wordWrapColumn":50,"files.exclude":{"**/*.pyc":true}}}},
		"result":{"type":"vm_file","path":"/home/user/.config/Code/User/settings.json","dest":"settings.json"}}`, []verdictCase{
		{"equal", map[string]string{settings: `{"editor.wordWrapColumn": 50, "files.exclude": {"**/*.pyc": true}}`}, nil, true},
		{"other keys beside", map[string]string{settings: `{"a": 1, "editor.wordWrapColumn": 50.0, "files.exclude": {"**/*.pyc": true}}`}, nil, true},
		{"one value changed", map[string]string{settings: `{"editor.wordWrapColumn": 40, "files.exclude": {"**/*.pyc": true}}`}, nil, false},
		{"a nested value with more keys is not equal", map[string]string{settings: `{"editor.wordWrapColumn": 50, "files.exclude": {"**/*.pyc": true, "x": false}}`}, nil, false},
		{"a number as a string", map[string]string{settings: `{"editor.wordWrapColumn": "50", "files.exclude": {"**/*.pyc": true}}`}, nil, false},
		{"a key missing", map[string]string{settings: `{"files.exclude": {"**/*.pyc": true}}`}, nil, false},
		{"not JSON", map[string]string{settings: `{"editor.wordWrapColumn": 50, // wrap`}, nil, false},
		{"a list", map[string]string{settings: `[1]`}, nil, false},
		{"no file", nil, nil, false},
	})
	const keys = "~/.config/Code/User/keybindings.json"
	verdicts(t, "check_json_keybindings", `{"func":"check_json_keybindings","expected":{"type":"rule","rules":{"expected":{"key":"ctrl+j","command":"workbench.action.focusActiveEditorGroup","when":"terminalFocus"}}},
		"result":{"type":"vm_file","path":"/home/user/.config/Code/User/keybindings.json","dest":"keybindings.json"}}`, []verdictCase{
		{"the binding, keys in another order", map[string]string{keys: `[{"command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus", "key": "ctrl+j"}]`}, nil, true},
		{"after VS Code's comment line", map[string]string{keys: "// Place your key bindings in this file to override the defaults\n[{\"key\": \"ctrl+j\", \"command\": \"workbench.action.focusActiveEditorGroup\", \"when\": \"terminalFocus\"}]"}, nil, true},
		{"another binding", map[string]string{keys: `[{"key": "ctrl+k", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus"}]`}, nil, false},
		{"a key more", map[string]string{keys: `[{"key": "ctrl+j", "command": "workbench.action.focusActiveEditorGroup", "when": "terminalFocus", "args": 1}]`}, nil, false},
		{"an object, not a list", map[string]string{keys: `{"key": "ctrl+j"}`}, nil, false},
		{"empty", map[string]string{keys: ``}, nil, false},
	})
	verdicts(t, "compare_config", `{"func":"compare_config","expected":{"type":"rule","rules":{"expected":"{\"workbench.colorTheme\": \"Visual Studio Dark\"}\n"}},
		"result":{"type":"vm_file","path":"/home/user/.config/Code/User/settings.json","dest":"settings.json"},"options":{"containment_ok":true}}`, []verdictCase{
		{"the setting among others", map[string]string{settings: `{"a": 1, "workbench.colorTheme": "Visual Studio Dark"}`}, nil, true},
		{"another theme", map[string]string{settings: `{"workbench.colorTheme": "Default Dark Modern"}`}, nil, false},
		{"not JSON, holding the text", map[string]string{settings: "// mine\n{\"workbench.colorTheme\": \"Visual Studio Dark\"}\n"}, nil, true},
		{"not JSON, another spacing", map[string]string{settings: "// mine\n{\"workbench.colorTheme\":\"Visual Studio Dark\"}\n"}, nil, false},
		{"a list", map[string]string{settings: `[{"workbench.colorTheme": "Visual Studio Dark"}]`}, nil, false},
	})
	verdicts(t, "compare_config of nested maps", `{"func":"compare_config","expected":{"type":"rule","rules":{"expected":"{\"a\": {\"b\": 1, \"c\": [1, 2]}}"}},
		"result":{"type":"vm_file","path":"/home/user/s.json","dest":"s.json"}}`, []verdictCase{
		{"a subset", map[string]string{"~/s.json": `{"a": {"b": 1, "c": [1, 2], "d": 3}, "e": 4}`}, nil, true},
		{"a list is whole", map[string]string{"~/s.json": `{"a": {"b": 1, "c": [1, 2, 3]}}`}, nil, false},
		{"a nested key missing", map[string]string{"~/s.json": `{"a": {"c": [1, 2]}}`}, nil, false},
	})
	const list = "code --list-extensions | grep undefined_publisher.test"
	verdicts(t, "is_extension_installed", `{"func":"is_extension_installed","result":{"type":"vm_command_line","command":"code --list-extensions | grep undefined_publisher.test"},
		"expected":{"type":"rule","rules":{"type":"contain","expected":"undefined_publisher.test"}}}`, []verdictCase{
		{"listed", nil, map[string]string{list: "undefined_publisher.test\n"}, true},
		{"not listed", nil, map[string]string{list: ""}, false},
	})
	verdicts(t, "is_extension_installed, not_contain", `{"func":"is_extension_installed","result":{"type":"vm_command_line","command":"code --list-extensions | grep undefined_publisher.test"},
		"expected":{"type":"rule","rules":{"type":"not_contain","expected":"undefined_publisher.test"}}}`, []verdictCase{
		{"listed", nil, map[string]string{list: "undefined_publisher.test\n"}, false},
		{"not listed", nil, map[string]string{list: "ms-python.python\n"}, true},
	})
}

func TestChromeProfileMetrics(t *testing.T) {
	const prefs = chromiumProfile + "Preferences"
	verdicts(t, "exact_match of enable_do_not_track", `{"func":"exact_match","result":{"type":"enable_do_not_track"},"expected":{"type":"rule","rules":{"expected":"true"}}}`, []verdictCase{
		{"on", map[string]string{prefs: `{"enable_do_not_track": true}`}, nil, true},
		{"off", map[string]string{prefs: `{"enable_do_not_track": false}`}, nil, false},
		{"absent", map[string]string{prefs: `{"profile": {}}`}, nil, false},
		{"not JSON", map[string]string{prefs: `{`}, nil, false},
	})
	verdicts(t, "exact_match of enable_do_not_track, false", `{"func":"exact_match","result":{"type":"enable_do_not_track"},"expected":{"type":"rule","rules":{"expected":"false"}}}`, []verdictCase{
		{"on", map[string]string{prefs: `{"enable_do_not_track": true}`}, nil, false},
		{"absent", map[string]string{prefs: `{}`}, nil, true},
		{"not JSON gives false", map[string]string{prefs: `nope`}, nil, true},
	})
	verdicts(t, "exact_match of profile_name", `{"func":"exact_match","result":{"type":"profile_name"},"expected":{"type":"rule","rules":{"expected":"Thomas"}}}`, []verdictCase{
		{"named", map[string]string{prefs: `{"profile": {"name": "Thomas", "x": 1}}`}, nil, true},
		{"another name", map[string]string{prefs: `{"profile": {"name": "Person 1"}}`}, nil, false},
		{"no profile", map[string]string{prefs: `{}`}, nil, false},
		{"a profile that is not a map", map[string]string{prefs: `{"profile": "Thomas"}`}, nil, false},
	})
	verdicts(t, "match_in_list of default_search_engine", `{"func":"match_in_list","result":{"type":"default_search_engine"},"expected":{"type":"rule","rules":{"expected":["Microsoft Bing","Bing"]}}}`, []verdictCase{
		{"Bing", map[string]string{prefs: `{"default_search_provider_data": {"template_url_data": {"short_name": "Bing"}}}`}, nil, true},
		{"DuckDuckGo", map[string]string{prefs: `{"default_search_provider_data": {"template_url_data": {"short_name": "DuckDuckGo"}}}`}, nil, false},
		{"none set is Google", map[string]string{prefs: `{}`}, nil, false},
	})
	verdicts(t, "match_in_list of the default, Google", `{"func":"match_in_list","result":{"type":"default_search_engine"},"expected":{"type":"rule","rules":{"expected":["Google"]}}}`, []verdictCase{
		{"none set", map[string]string{prefs: `{"default_search_provider_data": {}}`}, nil, true},
	})
	verdicts(t, "exact_match of data_delete_automacally", `{"func":"exact_match","result":{"type":"data_delete_automacally"},"expected":{"type":"rule","rules":{"expected":"true"}}}`, []verdictCase{
		{"cookies kept for the session", map[string]string{prefs: `{"profile": {"default_content_setting_values": {"cookies": 4}}}`}, nil, true},
		// OSWorld's getter passes any content setting; Chromium writes
		// this one in every profile, so the setting itself is tested.
		{"Chromium's migration mark alone", map[string]string{prefs: `{"profile": {"default_content_setting_values": {"has_migrated_local_network_access": true}}}`}, nil, false},
		{"cookies allowed", map[string]string{prefs: `{"profile": {"default_content_setting_values": {"cookies": 1}}}`}, nil, false},
		{"none set", map[string]string{prefs: `{"profile": {"name": "Person 1"}}`}, nil, false},
		{"no profile gives Google", map[string]string{prefs: `{}`}, nil, false},
	})
	verdicts(t, "exact_match of data_delete_automacally, false", `{"func":"exact_match","result":{"type":"data_delete_automacally"},"expected":{"type":"rule","rules":{"expected":"false"}}}`, []verdictCase{
		{"none set", map[string]string{prefs: `{"profile": {}}`}, nil, true},
		{"no profile is not false", map[string]string{prefs: `{}`}, nil, false},
	})
	verdicts(t, "check_font_size, a range", `{"func":"check_font_size","result":{"type":"chrome_font_size"},"expected":{"type":"rule","rules":{"type":"range","min":16,"max":99999}}}`, []verdictCase{
		{"very large", map[string]string{prefs: `{"webkit": {"webprefs": {"default_font_size": 24}}}`}, nil, true},
		{"medium, the default", map[string]string{prefs: `{"webkit": {"webprefs": {"default_font_size": 16}}}`}, nil, false},
		{"no webprefs is 16", map[string]string{prefs: `{"profile": {}}`}, nil, false},
		{"webprefs without the size", map[string]string{prefs: `{"webkit": {"webprefs": {"minimum_font_size": 20}}}`}, nil, false},
	})
	verdicts(t, "check_font_size, a value", `{"func":"check_font_size","result":{"type":"chrome_font_size"},"expected":{"type":"rule","rules":{"type":"value","value":20}}}`, []verdictCase{
		{"equal", map[string]string{prefs: `{"webkit": {"webprefs": {"default_font_size": 20}}}`}, nil, true},
		{"other", map[string]string{prefs: `{"webkit": {"webprefs": {"default_font_size": 24}}}`}, nil, false},
	})
	const marks = chromiumProfile + "Bookmarks"
	bar := func(children string) string {
		return `{"roots": {"bookmark_bar": {"children": [` + children + `], "type": "folder"}, "other": {"children": []}}}`
	}
	verdicts(t, "is_expected_bookmarks of folders", `{"func":"is_expected_bookmarks","result":{"type":"bookmarks"},"expected":{"type":"rule","rules":{"type":"bookmark_bar_folders_names","names":["Favorites"]}}}`, []verdictCase{
		{"the folder, and a page", map[string]string{marks: bar(`{"type": "folder", "name": "Favorites", "children": []}, {"type": "url", "name": "x", "url": "https://x.example/"}`)}, nil, true},
		{"twice is one name", map[string]string{marks: bar(`{"type": "folder", "name": "Favorites"}, {"type": "folder", "name": "Favorites"}`)}, nil, true},
		{"another folder beside", map[string]string{marks: bar(`{"type": "folder", "name": "Favorites"}, {"type": "folder", "name": "Work"}`)}, nil, false},
		{"none", map[string]string{marks: bar(``)}, nil, false},
		{"no roots", map[string]string{marks: `{}`}, nil, false},
	})
	verdicts(t, "is_expected_bookmarks of pages", `{"func":"is_expected_bookmarks","result":{"type":"bookmarks"},"expected":{"type":"rule","rules":{"type":"bookmark_bar_websites_urls","urls":["https://a.example/"]}}}`, []verdictCase{
		{"the page", map[string]string{marks: bar(`{"type": "url", "name": "A", "url": "https://a.example/"}, {"type": "folder", "name": "F"}`)}, nil, true},
		{"another page", map[string]string{marks: bar(`{"type": "url", "name": "B", "url": "https://b.example/"}`)}, nil, false},
	})
}

func TestFileMetrics(t *testing.T) {
	db := func(stmts ...string) string {
		file := filepath.Join(t.TempDir(), "g.sqlite")
		d, err := sql.Open("sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range stmts {
			if _, err := d.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		d.Close()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const q = "SELECT COALESCE((SELECT COUNT(*) FROM m WHERE starred = 1), 0) = (SELECT COUNT(*) FROM m);"
	verdicts(t, "run_sqlite3", `{"func":"run_sqlite3","result":{"type":"vm_file","path":"/home/user/g.sqlite","dest":"g.sqlite"},"expected":{"type":"rule","rules":{"sql":"`+q+`"}}}`, []verdictCase{
		{"every message starred", map[string]string{"~/g.sqlite": db("CREATE TABLE m (starred INT)", "INSERT INTO m VALUES (1), (1)")}, nil, true},
		{"one not", map[string]string{"~/g.sqlite": db("CREATE TABLE m (starred INT)", "INSERT INTO m VALUES (1), (0)")}, nil, false},
		{"no table", map[string]string{"~/g.sqlite": db("CREATE TABLE n (a INT)")}, nil, false},
	})
	verdicts(t, "check_json", `{"func":"check_json","result":{"type":"vm_file","path":"/home/user/x.json","dest":"x.json"},
		"expected":{"type":"rule","rules":{"expect":[{"key":["chrome://messenger/content/messenger.xhtml","folderTree","mode"],"method":"re","ref":"\\bsmart\\b"},{"key":["n"],"method":"eq","ref":2}]}}}`, []verdictCase{
		{"both", map[string]string{"~/x.json": `{"chrome://messenger/content/messenger.xhtml": {"folderTree": {"mode": "smart,all"}}, "n": 2.0}`}, nil, true},
		{"a word around it", map[string]string{"~/x.json": `{"chrome://messenger/content/messenger.xhtml": {"folderTree": {"mode": "smartest"}}, "n": 2}`}, nil, false},
		{"another number", map[string]string{"~/x.json": `{"chrome://messenger/content/messenger.xhtml": {"folderTree": {"mode": "smart"}}, "n": 3}`}, nil, false},
		{"a key missing", map[string]string{"~/x.json": `{"chrome://messenger/content/messenger.xhtml": {"folderTree": {}}, "n": 2}`}, nil, false},
		{"a number, not a string", map[string]string{"~/x.json": `{"chrome://messenger/content/messenger.xhtml": {"folderTree": {"mode": 1}}, "n": 2}`}, nil, false},
	})
}

func TestVLCMetrics(t *testing.T) {
	vlc := func(fn, rules string) string {
		return `{"func":"` + fn + `","expected":{"type":"rule","rules":` + rules + `},"result":{"type":"vlc_config","dest":"vlcrc"}}`
	}
	rc := func(lines ...string) map[string]string {
		return map[string]string{vlcrc: strings.Join(lines, "\n") + "\n"}
	}
	verdicts(t, "check_qt_bgcone", vlc("check_qt_bgcone", `{"expected_qt_bgcone":0}`), []verdictCase{
		{"off", rc("# Display background cone or art (boolean)", "qt-bgcone=0"), nil, true},
		{"the comment only: its default, 1, shown", rc("#qt-bgcone=1"), nil, false},
		{"no line: on", rc("[qt]"), nil, false},
		{"the last line decides", rc("qt-bgcone=0", "qt-bgcone=1"), nil, false},
	})
	verdicts(t, "check_qt_max_volume", vlc("check_qt_max_volume", `{"expected_qt_max_volume":200}`), []verdictCase{
		{"200", rc("qt-max-volume=200 "), nil, true},
		{"default 125", rc(""), nil, false},
	})
	verdicts(t, "check_qt_max_volume of the default", vlc("check_qt_max_volume", `{"expected_qt_max_volume":125}`), []verdictCase{
		{"no line", rc("[qt]"), nil, true},
	})
	verdicts(t, "check_qt_minimal_view", vlc("check_qt_minimal_view", `{"expected_qt_minimal_view":1}`), []verdictCase{
		{"on", rc("qt-minimal-view=1"), nil, true},
		{"off", rc("qt-minimal-view=0"), nil, false},
	})
	verdicts(t, "check_global_key_play_pause", vlc("check_global_key_play_pause", `{"expected_global_key_play_pause":1}`), []verdictCase{
		{"a key", rc("global-key-play-pause=Ctrl+Space"), nil, true},
		{"empty", rc("#global-key-play-pause="), nil, false},
		{"no line", rc("key-play-pause=Space"), nil, false},
	})
	verdicts(t, "check_global_key_play_pause unset", vlc("check_global_key_play_pause", `{"expected_global_key_play_pause":0}`), []verdictCase{
		{"no line", rc("key-play-pause=Space"), nil, true},
		{"a key", rc("global-key-play-pause=Ctrl+Space"), nil, false},
	})
	verdicts(t, "check_one_instance_when_started_from_file", vlc("check_one_instance_when_started_from_file", `{"expected_one_instance_when_started_from_file":0}`), []verdictCase{
		{"off", rc("one-instance-when-started-from-file=0"), nil, true},
		{"default on", rc(""), nil, false},
	})
	verdicts(t, "check_play_and_exit", vlc("check_play_and_exit", `{"expected_play_and_exit":1}`), []verdictCase{
		{"on", rc("play-and-exit=1"), nil, true},
		{"default off", rc(""), nil, false},
	})
	verdicts(t, "check_qt_slider_colours blackish", vlc("check_qt_slider_colours", `{"type":"blackish"}`), []verdictCase{
		{"dark", rc("qt-slider-colours=0;0;0;20;20;20;99;99;99;1;2;3"), nil, true},
		{"one channel 100", rc("qt-slider-colours=0;0;0;20;20;100"), nil, false},
		{"a last, partial colour is not read", rc("qt-slider-colours=0;0;0;255"), nil, true},
		{"default", rc(""), nil, false},
		{"not numbers", rc("qt-slider-colours=a;b;c"), nil, false},
	})
	verdicts(t, "check_qt_slider_colours match", vlc("check_qt_slider_colours", `{"type":"match","expected_qt_slider_colours":"1;2;3"}`), []verdictCase{
		{"equal", rc("qt-slider-colours=1;2;3"), nil, true},
		{"other", rc("qt-slider-colours=1;2;4"), nil, false},
	})
	verdicts(t, "no vlcrc", vlc("check_play_and_exit", `{"expected_play_and_exit":0}`), []verdictCase{
		{"no file", nil, nil, false},
	})
}

func TestThunderbirdPrefs(t *testing.T) {
	const prefs = "~/.thunderbird/p.default-release/prefs.js"
	js := func(lines ...string) map[string]string {
		return map[string]string{prefs: strings.Join(lines, "\n") + "\n"}
	}
	verdicts(t, "check_thunderbird_prefs, re.S", `{"func":"check_thunderbird_prefs","result":{"type":"vm_file","path":"/home/user/.thunderbird/p.default-release/prefs.js","dest":"prefs.js"},
		"expected":{"type":"rule","rules":{"expect":{"mail.identity.id1.htmlSigText":{"method":"re.S","ref":"Anonym\\nXYZ Lab"}}}}}`, []verdictCase{
		{"the signature on two lines", js(`user_pref("mail.identity.id1.fullName", "A");`, `user_pref("mail.identity.id1.htmlSigText", "Anonym\nXYZ Lab");`), nil, true},
		{"on one line", js(`user_pref("mail.identity.id1.htmlSigText", "Anonym XYZ Lab");`), nil, false},
		{"a later line decides", js(`user_pref("mail.identity.id1.htmlSigText", "Anonym\nXYZ Lab");`, `user_pref("mail.identity.id1.htmlSigText", "");`), nil, false},
		{"not set", js(`user_pref("mail.identity.id1.fullName", "Anonym\nXYZ Lab");`), nil, false},
	})
	verdicts(t, "check_thunderbird_prefs, re and eq", `{"func":"check_thunderbird_prefs","result":{"type":"vm_file","path":"/home/user/.thunderbird/p.default-release/prefs.js","dest":"prefs.js"},
		"expected":{"type":"rule","rules":{"expect":{"extensions.activeThemeID":{"method":"re","ref":"dark"},"mail.identity.id1.auto_quote":{"method":"eq","ref":false}},
		"unexpect":{"mail.server.default.check_new_mail":{"method":"re","ref":"^t"}}}}}`, []verdictCase{
		{"dark, no quoting", js(`user_pref("extensions.activeThemeID", "thunderbird-compact-dark@mozilla.org");`, `user_pref("mail.identity.id1.auto_quote", false);`), nil, true},
		{"light", js(`user_pref("extensions.activeThemeID", "thunderbird-compact-light@mozilla.org");`, `user_pref("mail.identity.id1.auto_quote", false);`), nil, false},
		{"quoting", js(`user_pref("extensions.activeThemeID", "dark");`, `user_pref("mail.identity.id1.auto_quote", true);`), nil, false},
		{"the unexpected value", js(`user_pref("extensions.activeThemeID", "dark");`, `user_pref("mail.identity.id1.auto_quote", false);`, `user_pref("mail.server.default.check_new_mail", "true");`), nil, false},
		{"another value of it", js(`user_pref("extensions.activeThemeID", "dark");`, `user_pref("mail.identity.id1.auto_quote", false);`, `user_pref("mail.server.default.check_new_mail", "false");`), nil, true},
	})
}

func TestImageSize(t *testing.T) {
	png := func(w, h int) string {
		var buf bytes.Buffer
		if err := gopng.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	verdicts(t, "check_image_size", `{"func":"check_image_size","result":{"type":"vm_file","path":"/home/user/Desktop/r.png","dest":"r.png"},"expected":{"type":"rule","rules":{"height":128,"width":128}}}`, []verdictCase{
		{"128 square", map[string]string{"~/Desktop/r.png": png(128, 128)}, nil, true},
		{"129 wide", map[string]string{"~/Desktop/r.png": png(129, 128)}, nil, false},
		{"127 high", map[string]string{"~/Desktop/r.png": png(128, 127)}, nil, false},
		{"not a picture", map[string]string{"~/Desktop/r.png": "png"}, nil, false},
	})
	verdicts(t, "check_image_size of the height", `{"func":"check_image_size","result":{"type":"vm_file","path":"/home/user/Desktop/r.png","dest":"r.png"},"expected":{"type":"rule","rules":{"height":512}}}`, []verdictCase{
		{"any width", map[string]string{"~/Desktop/r.png": png(30, 512)}, nil, true},
		{"another height", map[string]string{"~/Desktop/r.png": png(512, 30)}, nil, false},
	})
}

// VLC writes a vlcrc of some 6,000 lines, every setting with its
// comment: the predicates read one within the expressions' limits.
func TestVLCMetricsOnAFullVlcrc(t *testing.T) {
	var lines []string
	for i := range 3000 {
		lines = append(lines, fmt.Sprintf("# Setting number %d of a module, described at some length (integer)", i), fmt.Sprintf("#module-setting-%d=%d", i, i))
	}
	full := strings.Join(append(lines, "qt-max-volume=200"), "\n") + "\n"
	verdicts(t, "check_qt_max_volume on a full vlcrc", `{"func":"check_qt_max_volume","expected":{"type":"rule","rules":{"expected_qt_max_volume":200}},"result":{"type":"vlc_config","dest":"vlcrc"}}`, []verdictCase{
		{"set at the end", map[string]string{vlcrc: full}, nil, true},
		{"not set", map[string]string{vlcrc: strings.Join(lines, "\n")}, nil, false},
	})
}

func TestGNOMEMetrics(t *testing.T) {
	const fav = "gsettings get org.gnome.shell favorite-apps"
	verdicts(t, "check_gnome_favorite_apps", `{"func":"check_gnome_favorite_apps","result":{"type":"vm_command_line","command":"`+fav+`","shell":true},"expected":{"type":"rule","rules":{"expected":["google-chrome.desktop","thunderbird.desktop"]}}}`, []verdictCase{
		{"the two", nil, map[string]string{fav: "['google-chrome.desktop', 'thunderbird.desktop']\n"}, true},
		{"in another order", nil, map[string]string{fav: "['thunderbird.desktop', 'google-chrome.desktop']\n"}, true},
		{"vim still there", nil, map[string]string{fav: "['thunderbird.desktop', 'vim.desktop', 'google-chrome.desktop']\n"}, false},
		{"one removed too many", nil, map[string]string{fav: "['thunderbird.desktop']\n"}, false},
		{"a repeat of one", nil, map[string]string{fav: "['thunderbird.desktop', 'thunderbird.desktop']\n"}, false},
		{"empty, as gsettings prints it", nil, map[string]string{fav: "@as []\n"}, false},
	})
	const scale = "scale"
	const zoom = "zoom"
	verdicts(t, "check_include_exclude, an or of two with three strings each", `{"func":["check_include_exclude","check_include_exclude"],"conj":"or",
		"result":[{"type":"vm_command_line","command":"`+scale+`","shell":true},{"type":"vm_command_line","command":"`+zoom+`","shell":true}],
		"expected":[{"type":"rule","rules":{"include":["Large text enabled"],"exclude":["No text scaling enabled","error"]}},
		            {"type":"rule","rules":{"include":["Zoom enabled with magnification"],"exclude":["No zoom magnification enabled","error"]}}]}`, []verdictCase{
		{"large text", nil, map[string]string{scale: "Large text enabled (factor: 1.5)\n", zoom: "No zoom magnification enabled\n"}, true},
		{"zoom", nil, map[string]string{scale: "No text scaling enabled\n", zoom: "Zoom enabled with magnification (factor: 2.0)\n"}, true},
		{"neither", nil, map[string]string{scale: "No text scaling enabled\n", zoom: "No zoom magnification enabled\n"}, false},
		{"an error beside the include", nil, map[string]string{scale: "Large text enabled, error\n", zoom: "No zoom magnification enabled\n"}, false},
	})
}
