package apicall_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/duration"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/xdesktop"
	"github.com/proctor-eval/proctor/query"
	"github.com/proctor-eval/proctor/task"
)

// The loopback probes against the real applications that serve them in
// the science suite: PyMOL's XML-RPC server and Stellarium's
// RemoteControl API, each started with network: private on a local
// desktop, as the suite starts them.

func TestMain(m *testing.M) {
	xdesktop.Watchdog()
	os.Exit(m.Run())
}

func need(t *testing.T, bins ...string) {
	t.Helper()
	for _, b := range append([]string{"Xvfb", "dbus-daemon", "openbox"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed", b)
		}
	}
}

func desktop(t *testing.T, setup env.Setup) *xdesktop.Desktop {
	t.Helper()
	d, err := xdesktop.Start(context.Background(), xdesktop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Reset(context.Background(), setup); err != nil {
		t.Fatal(err)
	}
	return d
}

// waitUntil is a setup step that waits, inside the desktop's network
// namespace, until url answers.
func waitUntil(url string) task.Step {
	return task.Step{Run: &task.Run{Command: "true", Network: task.NetworkPrivate, Timeout: duration.Duration(90 * time.Second),
		Until: `python3 -c 'import urllib.request; urllib.request.urlopen("` + url + `", timeout=5)'`}}
}

func TestXMLRPCProbeOnPyMOL(t *testing.T) {
	need(t, "pymol", "python3")
	pymol := task.AppSpec{Command: "pymol -R", Window: "PyMOL", Network: task.NetworkPrivate, Env: map[string]string{"PYMOL_RPCHOST": "127.0.0.1"}}
	d := desktop(t, env.Setup{Apps: map[string]task.AppSpec{"pymol": pymol}, Steps: []task.Step{
		{Launch: &task.Launch{App: "pymol", Args: []string{"/usr/share/pymol/data/demo/pept.pdb"}, WaitWindow: "PyMOL", Timeout: duration.Duration(60 * time.Second)}},
		{Run: &task.Run{Command: "true", Network: task.NetworkPrivate, Timeout: duration.Duration(60 * time.Second),
			Until: `python3 -c 'import xmlrpc.client as x; x.ServerProxy("http://127.0.0.1:9123").count_atoms("all")'`}},
	}})
	ctx := context.Background()
	call := func(method string, params ...any) (string, bool) {
		t.Helper()
		v, found, err := env.CallLoopback(ctx, d, query.Service{XMLRPC: &query.XMLRPC{Port: 9123, Method: method, Params: params}})
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return v, found
	}
	for _, tc := range []struct {
		method string
		params []any
		want   string
	}{
		{"count_atoms", []any{"all"}, "107"},
		{"count_atoms", []any{"elem C"}, "69"},
		{"get_names", nil, `["pept"]`},
		{"get_chains", []any{"all"}, `["E"]`},
		{"get_setting_text", []any{"bg_rgb"}, `"0x000000"`},
	} {
		if v, found := call(tc.method, tc.params...); !found || v != tc.want {
			t.Errorf("%s%v = %s found %v, want %s", tc.method, tc.params, v, found, tc.want)
		}
	}
	if v, found := call("no_such_method"); found || !strings.HasPrefix(v, "fault ") {
		t.Errorf("an unknown method: %q found %v, want a fault", v, found)
	}
	// What the agent does in the GUI is what the probe reads: PyMOL's
	// command line has the focus.
	if _, err := d.Do(ctx, []action.Action{{Kind: action.Type, Text: "color red, elem O\n"}}); err != nil {
		t.Fatal(err)
	}
	oxygens, _ := call("count_atoms", "elem O")
	var red string
	for range 50 {
		if red, _ = call("count_atoms", "color red"); red == oxygens {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if red != oxygens || red == "0" {
		t.Fatalf("after colouring the oxygens red: %s red atoms, %s oxygens", red, oxygens)
	}
}

func TestHTTPProbeOnStellarium(t *testing.T) {
	need(t, "stellarium", "python3")
	config, err := os.ReadFile("../suites/science/assets/stellarium/config.ini")
	if err != nil {
		t.Fatal(err)
	}
	stellarium := task.AppSpec{Command: "stellarium", Window: "Stellarium", Network: task.NetworkPrivate}
	d := desktop(t, env.Setup{Apps: map[string]task.AppSpec{"stellarium": stellarium}, Steps: []task.Step{
		{Write: &task.Write{Path: "~/.stellarium/config.ini", Content: string(config)}},
		{Launch: &task.Launch{App: "stellarium", WaitWindow: "Stellarium", Timeout: duration.Duration(90 * time.Second)}},
		waitUntil("http://127.0.0.1:8090/api/main/status"),
	}})
	ctx := context.Background()
	get := func(path string) (string, bool) {
		t.Helper()
		v, found, err := env.CallLoopback(ctx, d, query.Service{HTTP: &query.HTTP{Port: 8090, Path: path}})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v, found
	}
	v, found := get("/api/main/status")
	var status struct {
		Location struct {
			Planet string `json:"planet"`
		} `json:"location"`
		Time struct {
			JDay float64 `json:"jday"`
		} `json:"time"`
		View struct {
			FOV float64 `json:"fov"`
		} `json:"view"`
	}
	if err := json.Unmarshal([]byte(v), &status); !found || err != nil || status.Location.Planet != "Earth" || status.Time.JDay < 2400000 || status.View.FOV <= 0 {
		t.Fatalf("status: %s found %v err %v", v, found, err)
	}
	if v, found := get("/api/objects/info?name=Mars&format=json"); !found || !strings.Contains(v, `"name"`) || !strings.Contains(strings.ToLower(v), "mars") {
		t.Fatalf("Mars: %s found %v", v, found)
	}
	if v, found := get("/api/objects/info?name=NoSuchObjectAnywhere&format=json"); found {
		t.Fatalf("an object that does not exist is found: %s", v)
	}
	// The API reaches nothing on the machine's loopback: the port is the
	// desktop's own.
	if res, err := d.Run(ctx, `python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8090/api/main/status", timeout=5)'`, 20*time.Second); err != nil || res.ExitCode == 0 {
		t.Fatalf("the machine's loopback reaches Stellarium's API: %+v %v", res, err)
	}
}
