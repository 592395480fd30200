package osworld

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/proctor-eval/proctor/check"
)

// The metrics here read one setting of an application's configuration
// file: VLC's recordings folder in vlcrc, LibreOffice's AutoRecovery
// interval in registrymodifications.xcu.

// vlcrcHomed prints VLC's vlcrc with a value that begins with the
// desktop's home written as OSWorld's user's home (/home/user), the
// inverse of what an import does to OSWorld's paths, so that a path
// setting compares with the path the task file names.
const vlcrcHomed = `sed "s#=$HOME\(/\|\$\)#=/home/user\1#" ~/.config/vlc/vlcrc`

// vlcRecordingsFolder: is_vlc_recordings_folder, the first line of vlcrc
// that is not a comment (#) nor blank and holds input-record-path sets,
// after its last "=" and spaces aside, the expected folder; no such line
// fails.
func vlcRecordingsFolder(_ *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vlc_config" {
		return nil, "a result that is not VLC's configuration"
	}
	want, why := rule(expected, "recording_file_path")
	if why != "" {
		return nil, why
	}
	folder, ok := want.(string)
	if !ok || folder == "" {
		return nil, "a recording_file_path that is not a path"
	}
	expr := `let ls = filter(split(text, "\n"), !(# startsWith "#") && trim(#) != "" && # contains "input-record-path"); ` +
		`len(ls) > 0 && trim(last(split(ls[0], "="))) == ` + strconv.Quote(folder)
	return []check.Spec{{Kind: check.Predicate, Probe: &check.Probe{Command: vlcrcHomed}, Expr: expr}}, ""
}

// autoSavingTime: check_auto_saving_time, LibreOffice's registry of
// changed settings sets the AutoRecovery interval
// (/org.openoffice.Office.Common/Save/Document, AutoSaveTimeIntervall) to
// the expected minutes, as its Tools, Options, Load/Save, General writes
// it: one item a line. OSWorld's metric takes the last such item; the
// registry holds one.
func autoSavingTime(_ *converter, result, expected *Getter, opts map[string]any) ([]check.Spec, string) {
	if len(opts) > 0 {
		return nil, "options"
	}
	if result == nil || result.Type != "vm_file" || str(result.Path) == "" {
		return nil, "a result that is not a file"
	}
	want, why := rule(expected, "minutes")
	if why != "" {
		return nil, why
	}
	minutes, ok := want.(float64)
	if !ok || minutes != float64(int(minutes)) || minutes < 0 {
		return nil, fmt.Sprintf("minutes %v that are not a whole number", want)
	}
	re := `<item oor:path="` + regexp.QuoteMeta("/org.openoffice.Office.Common/Save/Document") + `">` +
		`<prop oor:name="AutoSaveTimeIntervall"[^>]*><value>\s*\+?0*` + strconv.Itoa(int(minutes)) + `\s*</value></prop></item>`
	return []check.Spec{{Kind: check.Contains, Probe: &check.Probe{File: home(str(result.Path))}, Value: re, Regex: true, CaseSense: true}}, ""
}

func init() {
	metrics["is_vlc_recordings_folder"] = vlcRecordingsFolder
	metrics["check_auto_saving_time"] = autoSavingTime
}
