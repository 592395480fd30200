package task

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/check"
)

// TestReadAssetRefusesLinksOut: an asset that is a symbolic link to a
// file outside the assets folder is refused; one to a file inside is read.
func TestReadAssetRefusesLinksOut(t *testing.T) {
	dir := t.TempDir()
	assets := filepath.Join(dir, AssetDir)
	if err := os.MkdirAll(assets, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o600)
	os.WriteFile(filepath.Join(assets, "data.csv"), []byte("a,b\n"), 0o644)
	for name, target := range map[string]string{"out.csv": secret, "rel.csv": "../secret.txt", "etc.csv": "/etc/passwd", "in.csv": "data.csv"} {
		if err := os.Symlink(target, filepath.Join(assets, name)); err != nil {
			t.Fatal(err)
		}
	}
	s := &Suite{Dir: dir}
	for _, name := range []string{"out.csv", "rel.csv", "etc.csv", "../secret.txt"} {
		if b, err := s.ReadAsset(name); err == nil {
			t.Errorf("ReadAsset(%q) = %q, want it refused", name, b)
		}
	}
	if b, err := s.ReadAsset("in.csv"); err != nil || string(b) != "a,b\n" {
		t.Errorf("ReadAsset(in.csv) = %q, %v; want the linked asset inside the folder", b, err)
	}
}

// TestLintNamesAssetLinksOut: loading a suite whose asset links out of
// the assets folder names that asset.
func TestLintNamesAssetLinksOut(t *testing.T) {
	dir := t.TempDir()
	assets := filepath.Join(dir, AssetDir)
	os.MkdirAll(assets, 0o755)
	if err := os.Symlink("/etc/passwd", filepath.Join(assets, "users.csv")); err != nil {
		t.Fatal(err)
	}
	task := "id: copy-users\ninstruction: Count the users.\napp: bash\nlevel: paper\nkind: qa\nsetup:\n  - copy: {asset: users.csv, to: ~/users.csv}\nchecks:\n  - kind: answer\n    accepted: [\"3\"]\n"
	os.WriteFile(filepath.Join(dir, "t.yaml"), []byte(task), 0o644)
	_, ps := Load(dir)
	if !strings.Contains(ps.Error(), "users.csv: the asset is a symbolic link out of") {
		t.Fatalf("problems:\n%v\nwant the linked asset named", ps)
	}
}

// TestLintRefusesMissingCapabilities: a task whose setup, checks or gold
// need what its environment type lacks is refused at the place that
// needs it.
func TestLintRefusesMissingCapabilities(t *testing.T) {
	old := TypeCapabilities["vnc"]
	TypeCapabilities["vnc"] = []Capability{} // a screen and input only
	defer func() {
		if old == nil {
			delete(TypeCapabilities, "vnc")
		} else {
			TypeCapabilities["vnc"] = old
		}
	}()
	_, ps := Load("../testdata/example/vnc-load-average.yaml")
	got := ps.Error()
	for _, want := range []string{
		"vnc-load-average.yaml:16:11: setup[0]: the launch step needs apps, which a vnc environment does not offer",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems:\n%s\nwant %q", got, want)
		}
	}
	tk := &Task{Checks: []check.Spec{{Kind: check.CommandKind, Command: "true"}, {Kind: check.Process, Steps: []string{"OK"}}, {Kind: check.Exists, File: "~/x"}},
		Gold: []action.Action{{Kind: action.Click, Target: &action.Target{Role: "push button", Name: "OK"}}}}
	var caps []Capability
	for _, n := range tk.Missing([]Capability{CapWindows}) {
		caps = append(caps, n.Cap)
	}
	if fmt.Sprint(caps) != "[commands elements files tree]" {
		t.Errorf("missing %v, want [commands elements files tree]", caps)
	}
}
