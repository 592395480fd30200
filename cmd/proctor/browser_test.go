package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/proctor-eval/proctor/agent"
	"github.com/proctor-eval/proctor/env/browser"
	"github.com/proctor-eval/proctor/store"
)

// TestBrowserUseAgentOrdersAPlan runs an agent that answers in
// browser-use's format through "proctor run --agent http" on the browser
// environment: it reads the numbered elements of each observation, fills
// the form by index, answers the confirmation dialog and says done; the
// page probes find the order placed.
func TestBrowserUseAgentOrdersAPlan(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	var steps atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/step" {
			fmt.Fprint(w, "{}")
			return
		}
		var req agent.StepRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		index := func(role, name string) int {
			for _, m := range req.Observation.Marks {
				if m.Role == role && m.Name == name {
					return m.Tag
				}
			}
			return -1
		}
		var reply string
		switch steps.Add(1) {
		case 1:
			reply = fmt.Sprintf(`{"current_state": {"next_goal": "fill the form"}, "action": [
				{"input_text": {"index": %d, "text": "Ada Lovelace"}},
				{"select_dropdown_option": {"index": %d, "text": "Team"}},
				{"click_element_by_index": {"index": %d}}]}`,
				index("entry", "Full name"), index("combo box", "Plan"), index("push button", "Place order"))
		case 2:
			reply = fmt.Sprintf(`{"action": [{"click_element_by_index": {"index": %d}}]}`, index("push button", "OK"))
		default:
			reply = `{"action": [{"done": {"text": "ordered", "success": true}}]}`
		}
		json.NewEncoder(w).Encode(agent.StepResponse{Reply: reply, Format: "browser-use"})
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	stdout, errs, code := runCLI(t, "", "run", "--suite", "../../testdata/browser", "--env", "browser", "--agent", "http",
		"--agent-url", srv.URL, "--filter", "^order-plan$", "--out", dir)
	if code != 0 || !strings.Contains(errs, "success      order-plan") || !strings.Contains(errs, ": 1 task x 1 on browser 1") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The run records the size its task ran at.
	if run, err := st.Run(); err != nil || run.Resolution != "1280x800" {
		t.Fatalf("the run records the resolution %q (%v), want the task's 1280x800", run.Resolution, err)
	}
	recorded, err := st.Turns("order-plan", 0)
	if err != nil || len(recorded) != 3 {
		t.Fatalf("%d steps recorded (%v), want 3", len(recorded), err)
	}
	// The clicks are recorded on the elements the indexes named.
	if !strings.Contains(string(recorded[0].Done), `"element":"push button Place order"`) ||
		!strings.Contains(string(recorded[1].Done), `"element":"push button OK"`) {
		t.Fatalf("click records:\n%s\n%s", recorded[0].Done, recorded[1].Done)
	}
}

// TestValidateBrowserSuite proves the browser suite's checks in headless
// Chromium: every gold succeeds, every do-nothing and wrong trajectory
// does not.
func TestValidateBrowserSuite(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	_, errs, code := runCLI(t, "", "validate", "../../testdata/browser", "--env", "browser")
	if code != 0 || !strings.Contains(errs, "2 tasks, 9 trajectories, 0 violations") {
		t.Fatalf("validate exited %d:\n%s", code, errs)
	}
}

// TestValidateCommandService validates the example suite's task on its
// own application server: a command service started from a copy of its
// data before each episode, named in the setup by its origin, and read
// by the checks with sql and http probes. Gold passes only if the
// probes read the application's state.
func TestValidateCommandService(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	out, errs, code := runCLI(t, "", "validate", "../../testdata/example", "--env", "browser", "--filter", "^helpdesk-ticket-qa$")
	if code != 0 || !strings.Contains(errs, "1 task, 4 trajectories, 0 violations") {
		t.Fatalf("validate exited %d:\n%s\n%s", code, out, errs)
	}
}

// TestWebSuiteInBothSettings runs the same instances of the web suite in
// the browser environment (the DOM setting) and in Chromium on a local
// desktop (the pixel setting), with the pages served by the suite's
// static service, and compares the two runs side by side: both succeed,
// and the report's environment row tells them apart.
func TestWebSuiteInBothSettings(t *testing.T) {
	if _, err := browser.ExecPath(); err != nil {
		t.Skip(err)
	}
	needDesktop(t)
	const filter = "^(frames-pay-hale|shadow-restock-paper)$"
	dom := filepath.Join(t.TempDir(), "web-dom")
	pixels := filepath.Join(t.TempDir(), "web-pixels")
	for _, out := range []struct{ dir, env string }{{dom, "browser"}, {pixels, "local"}} {
		_, errs, code := runCLI(t, "", "run", "--suite", "../../suites/web", "--agent", "replay", "--env", out.env,
			"--filter", filter, "--out", out.dir)
		if code != 0 || !strings.Contains(errs, "success      frames-pay-hale") || !strings.Contains(errs, "success      shadow-restock-paper") {
			t.Fatalf("--env %s: exit %d\n%s", out.env, code, errs)
		}
	}
	stdout, errs, code := runCLI(t, "", "report", dom, pixels)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	var env, rate string
	for _, l := range strings.Split(stdout, "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "environment":
			env = strings.Join(f[1:], " ")
		case strings.HasPrefix(l, "success rate"):
			rate = strings.Join(f[2:], " ")
		}
	}
	if env != "browser x11" || rate != "100.0% 100.0%" {
		t.Fatalf("environment %q, success rate %q, want browser x11 and 100%% twice:\n%s", env, rate, stdout)
	}
}
