package osworld

import (
	"context"
	"testing"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/observe"
)

// TestAppConfig: each setting metric's checks, on the configuration files
// the table gives, pass where OSWorld's function gives 1.
func TestAppConfig(t *testing.T) {
	const xcu = "~/.config/libreoffice/4/user/registrymodifications.xcu"
	autosave := func(min string) string {
		return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<oor:items xmlns:oor="http://openoffice.org/2001/registry">` + "\n" +
			`<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>` + "\n" +
			`<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="AutoSaveTimeIntervall" oor:op="fuse"><value>` + min + `</value></prop></item>` + "\n</oor:items>\n"
	}
	tests := []struct {
		name     string
		metric   metric
		result   *Getter
		expected *Getter
		files    map[string]string // a file of the desktop, or a command's output
		pass     bool
	}{
		{"recordings on the desktop", vlcRecordingsFolder, &Getter{Type: "vlc_config"}, &Getter{Type: "rule", Rules: map[string]any{"recording_file_path": "/home/user/Desktop"}},
			map[string]string{vlcrcHomed: "[core]\n#input-record-path=\n\ninput-record-path= /home/user/Desktop \n"}, true},
		{"recordings elsewhere", vlcRecordingsFolder, &Getter{Type: "vlc_config"}, &Getter{Type: "rule", Rules: map[string]any{"recording_file_path": "/home/user/Desktop"}},
			map[string]string{vlcrcHomed: "input-record-path=/home/user/Videos\n"}, false},
		{"recordings: the first setting counts", vlcRecordingsFolder, &Getter{Type: "vlc_config"}, &Getter{Type: "rule", Rules: map[string]any{"recording_file_path": "/home/user/Desktop"}},
			map[string]string{vlcrcHomed: "input-record-path=/home/user/Videos\ninput-record-path=/home/user/Desktop\n"}, false},
		{"recordings: only the default, commented", vlcRecordingsFolder, &Getter{Type: "vlc_config"}, &Getter{Type: "rule", Rules: map[string]any{"recording_file_path": "/home/user/Desktop"}},
			map[string]string{vlcrcHomed: "#input-record-path=/home/user/Desktop\n"}, false},
		{"autosave 3 minutes", autoSavingTime, &Getter{Type: "vm_file", Path: "/home/user/.config/libreoffice/4/user/registrymodifications.xcu"}, &Getter{Type: "rule", Rules: map[string]any{"minutes": 3.0}},
			map[string]string{xcu: autosave("3")}, true},
		{"autosave 30 minutes", autoSavingTime, &Getter{Type: "vm_file", Path: "/home/user/.config/libreoffice/4/user/registrymodifications.xcu"}, &Getter{Type: "rule", Rules: map[string]any{"minutes": 3.0}},
			map[string]string{xcu: autosave("30")}, false},
		{"autosave not set", autoSavingTime, &Getter{Type: "vm_file", Path: "/home/user/.config/libreoffice/4/user/registrymodifications.xcu"}, &Getter{Type: "rule", Rules: map[string]any{"minutes": 3.0}},
			map[string]string{xcu: autosave("3")[:150] + "</oor:items>\n"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs, why := tc.metric(nil, tc.result, tc.expected, nil)
			if why != "" {
				t.Fatal(why)
			}
			rec := &check.Recorded{Files: map[string][]byte{}, Commands: map[string]observe.CommandResult{}}
			for k, v := range tc.files {
				rec.Files[k] = []byte(v)
				rec.Commands[k] = observe.CommandResult{Stdout: v}
			}
			for _, s := range specs {
				c, err := check.Compile(s)
				if err != nil {
					t.Fatal(err)
				}
				if r := c.Evaluate(context.Background(), rec, nil); r.Pass != tc.pass {
					t.Errorf("pass %v, want %v: %s", r.Pass, tc.pass, r.Reason)
				}
			}
		})
	}
	if _, why := autoSavingTime(nil, &Getter{Type: "vm_file", Path: "/x.xcu"}, &Getter{Type: "rule", Rules: map[string]any{"minutes": 2.5}}, nil); why == "" {
		t.Error("half a minute converted")
	}
}
