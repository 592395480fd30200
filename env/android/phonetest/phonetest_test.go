package phonetest

import (
	"context"
	"slices"
	"testing"
)

// The scripted phone answers as Android 14 does, byte for byte where the
// environment or a task's check reads the output.
func TestAnswers(t *testing.T) {
	tests := []struct {
		name, cmd      string
		stdout, stderr string
		exit           int
	}{
		{"content query of a table", "content query --uri content://settings/global",
			"Row: 0 _id=1, name=airplane_mode_on, value=0\nRow: 1 _id=2, name=wifi_on, value=1\n", "", 0},
		{"content query of a name", "content query --uri content://settings/global/wifi_on",
			"Row: 0 _id=2, name=wifi_on, value=1\n", "", 0},
		{"content query with where", `content query --uri content://settings/global --where "name='wifi_on'"`,
			"Row: 0 _id=2, name=wifi_on, value=1\n", "", 0},
		{"content query with where in brackets", `content query --uri content://settings/secure --where "(name = 'ui_night_mode')"`,
			"Row: 0 _id=1, name=ui_night_mode, value=2\n", "", 0},
		{"content query with a projection", "content query --uri content://settings/global --projection name:value --where \"name='airplane_mode_on'\"",
			"Row: 0 name=airplane_mode_on, value=0\n", "", 0},
		{"content query of nothing", "content query --uri content://settings/system/screen_brightness", "No result found.\n", "", 0},
		{"content query with a where SettingsProvider refuses", `content query --uri content://settings/global --where "value=1"`,
			"", "Error while accessing provider:settings\njava.lang.IllegalArgumentException: Supported SQL:\n" +
				"  uri content://some_table/some_property with null where and where args\n" +
				"  uri content://some_table with query name=some_name and null args\n" +
				"  but got - uri:content://settings/global, where:value=1 whereArgs:null\n", 1},
		{"content query of another table", "content query --uri content://settings/sushi", "",
			"Error while accessing provider:settings\njava.lang.IllegalArgumentException: Invalid Uri path:content://settings/sushi\n", 1},
		{"am start by action", "am start -a android.settings.SETTINGS", "Starting: Intent { act=android.settings.SETTINGS }\n", "", 0},
		{"am start -W of an activity", "am start -W -n 'com.android.settings/com.android.settings.wifi.WifiSettings'",
			"Starting: Intent { cmp=com.android.settings/.wifi.WifiSettings }\nStatus: ok\nLaunchState: COLD\n" +
				"Activity: com.android.settings/.wifi.WifiSettings\nTotalTime: 312\nWaitTime: 315\nComplete\n", "", 0},
		{"am start of an activity the app lacks", "am start -n com.android.settings/.Nope",
			"Starting: Intent { cmp=com.android.settings/.Nope }\n",
			"Error type 3\nError: Activity class {com.android.settings/com.android.settings.Nope} does not exist.\n", 1},
		{"am start of an action no app answers", "am start -W -a android.intent.action.VIEW -d 'https://example.org'",
			"Starting: Intent { act=android.intent.action.VIEW dat=https://example.org }\n",
			"Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=https://example.org flg=0x10000000 }\n", 1},
		{"pm list packages", "pm list packages org.proctor", "package:org.proctor.notes\npackage:org.proctor.sushi\n", "", 0},
		{"run-as a debuggable app", "run-as org.proctor.notes cat databases/none.db", "", "cat: databases/none.db: No such file or directory\n", 1},
		{"su on a phone without root", "su 0 cat /data/data/org.proctor.notes/databases/notes.db", "", "/system/bin/sh: su: inaccessible or not found\n", 127},
		{"pm install of a missing file", "pm install -r /data/local/tmp/none.apk", "", "Error: Can't open file: /data/local/tmp/none.apk\n", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ph := New(t, 1080, 2340)
			InstallProBench(ph)
			ph.Settings["global/airplane_mode_on"] = "0"
			ph.Settings["global/wifi_on"] = "1"
			ph.Settings["secure/ui_night_mode"] = "2"
			res, err := ph.Shell(context.Background(), tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stdout != tc.stdout || res.Stderr != tc.stderr || res.ExitCode != tc.exit {
				t.Errorf("%s:\nstdout %q\nstderr %q\nexit %d\nwant\nstdout %q\nstderr %q\nexit %d",
					tc.cmd, res.Stdout, res.Stderr, res.ExitCode, tc.stdout, tc.stderr, tc.exit)
			}
			if !slices.Equal(ph.Commands, []string{tc.cmd}) {
				t.Errorf("recorded %q", ph.Commands)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`content query --where "name='wifi_on'"`, []string{"content", "query", "--where", "name='wifi_on'"}, true},
		{`a 'b c' "d \"e\" \$f" g\ h ''`, []string{"a", "b c", `d "e" $f`, "g h", ""}, true},
		{`a 'b`, nil, false},
		{`a "b`, nil, false},
	}
	for _, tc := range tests {
		got, ok := words(tc.in)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("words(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// svc wifi turns Wi-Fi on and off as Android's Wi-Fi service does: the
// global setting wifi_on follows, and Settings lists the network only
// while it is on.
func TestSvcWifi(t *testing.T) {
	ph := New(t, 1080, 2400)
	InstallProBench(ph)
	ctx := context.Background()
	for _, tc := range []struct {
		cmd, setting string
		listed       bool
	}{
		{"svc wifi disable", "0\n", false},
		{"svc wifi enable", "1\n", true},
	} {
		if res, err := ph.Shell(ctx, tc.cmd); err != nil || res.ExitCode != 0 || res.Stdout != "" || res.Stderr != "" {
			t.Fatalf("%s: %+v, %v", tc.cmd, res, err)
		}
		if res, _ := ph.Shell(ctx, "settings get global wifi_on"); res.Stdout != tc.setting {
			t.Errorf("after %s, wifi_on is %q, want %q", tc.cmd, res.Stdout, tc.setting)
		}
		listed := false
		walk(settingsInternet(ph).Nodes, func(n *Node) { listed = listed || n.Text == "AndroidWifi" })
		if listed != tc.listed {
			t.Errorf("after %s, the network is listed: %v", tc.cmd, listed)
		}
	}
}
