package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/guest"
	"github.com/proctor-eval/proctor/observe"
	"github.com/proctor-eval/proctor/task"
)

// screenAgentTasks are the tasks of the built-in suite run over VNC in
// the ScreenAgent setting: every one of the suite's GUI applications that
// starts in seconds, and shell tasks (scripts/screenagent.sh adds the two
// LibreOffice tasks, which take longest).
const screenAgentTasks = "^(calc-product|dialog-answer-install-now|dialog-answer-skip-this-version|editor-write-1|files-create-notes-txt|count-words-1|append-milk-(gui|cli)|form-contact-rosa|web-order-team)$"

// TestScreenAgentSettingOverVNC runs the built-in suite's tasks on a
// desktop reached over VNC (x11vnc, served by "proctor guest --vnc"), the
// guest beside it setting each task up and reading the checks' probes:
// the gold solutions of 10 tasks all succeed, and so does ScreenAgent's
// plan-act-reflect pipeline speaking its JSON function calls to a model
// stand-in; proctor report --ccscore scores both runs against the gold.
func TestScreenAgentSettingOverVNC(t *testing.T) {
	needDesktop(t)
	tok := tokenFile(t, guest.NewToken())
	target, vnc, _ := startGuestWith(t, tok, "--vnc 127.0.0.1:0")
	dir := t.TempDir()
	on := []string{"--env", "vnc://" + vnc, "--vnc-guest", target, "--token-file", tok}

	gold := filepath.Join(dir, "gold")
	_, errs, code := runCLI(t, "", append([]string{"run", "--suite", "../../suites/desktop", "--agent", "replay",
		"--filter", screenAgentTasks, "--out", gold}, on...)...)
	if code != 0 || successes(errs) != 10 {
		t.Fatalf("the gold solutions over VNC: exit %d, want 10 successes\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "report", gold, "--ccscore")
	if code != 0 || !regexp.MustCompile(`cc-score +1\.000`).MatchString(out) ||
		!regexp.MustCompile(`mouse position accuracy +1\.000`).MatchString(out) {
		t.Fatalf("report --ccscore of the gold run: exit %d\n%s\n%s", code, out, errs)
	}

	model := screenAgentStandIn(t)
	t.Setenv("STANDIN_KEY", "k")
	reflect := filepath.Join(dir, "reflect")
	_, errs, code = runCLI(t, "", append([]string{"run", "--suite", "../../suites/desktop", "--agent", "reflect",
		"--format", "screenagent", "--model", "screenagent", "--base-url", model.URL, "--api-key-env", "STANDIN_KEY",
		"--obs", "screenshot+a11y", "--filter", "^(dialog-answer-install-now|editor-write-1)$",
		"--out", reflect}, on...)...)
	if code != 0 || successes(errs) != 2 {
		t.Fatalf("the reflect agent over VNC: exit %d, want 2 successes\n%s", code, errs)
	}
	out, errs, code = runCLI(t, "", "report", reflect, "--ccscore")
	m := regexp.MustCompile(`cc-score +([0-9.]+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("report --ccscore of the reflect run: exit %d\n%s\n%s", code, out, errs)
	}
	// Its clicks, aimed at pixels of the screenshot, touched the elements
	// the gold names.
	if cc, _ := strconv.ParseFloat(m[1], 64); cc < 0.9 || cc > 1 ||
		!regexp.MustCompile(`mouse position accuracy +1\.000`).MatchString(out) {
		t.Fatalf("CC-Score of the reflect run:\n%s", out)
	}
}

// screenAgentStandIn is an OpenAI-compatible server standing in for a
// ScreenAgent model: it plans a task's gold solution as sub-tasks
// (PlanAction), acts on each one with MouseAction and KeyboardAction
// (finding a target's element in the observation's accessibility table)
// and judges every sub-task done (EvaluateSubTaskAction).
func screenAgentStandIn(t *testing.T) *httptest.Server {
	t.Helper()
	s, probs := task.Load("../../suites/desktop")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	golds := map[string][]action.Action{}
	for _, tk := range s.Tasks {
		var steps []action.Action
		for _, a := range tk.Gold {
			if !a.Kind.Terminal() {
				steps = append(steps, a)
			}
		}
		golds[tk.Instruction] = steps
	}
	stepRE := regexp.MustCompile(`Current sub-task: step (\d+):`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
			http.Error(w, "bad request", 400)
			return
		}
		var system string
		json.Unmarshal(req.Messages[0].Content, &system)
		var user string // the text parts of the last message
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &parts) == nil {
			for _, p := range parts {
				user += p.Text
			}
		} else {
			json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &user)
		}
		// The task's instruction follows "The task: " (rules may follow it).
		_, rest, _ := strings.Cut(system, "The task: ")
		var steps []action.Action
		ok, longest := false, 0
		for in, st := range golds {
			if strings.HasPrefix(rest, in) && len(in) > longest {
				steps, ok, longest = st, true, len(in)
			}
		}
		answer := "FAIL"
		switch {
		case !ok:
		case strings.HasPrefix(system, "You plan the work"):
			var plan []string
			for i, a := range steps {
				plan = append(plan, fmt.Sprintf(`{"action_type": "PlanAction", "element": %q}`, fmt.Sprintf("step %d: %s", i+1, a)))
			}
			answer = "```json\n[" + strings.Join(plan, ", ") + "]\n```"
		case strings.HasPrefix(system, "You judge"):
			answer = `{"action_type": "EvaluateSubTaskAction", "situation": "sub_task_success"}`
		case strings.HasPrefix(system, "You act"):
			m := stepRE.FindStringSubmatch(user)
			if m == nil {
				break
			}
			i, _ := strconv.Atoi(m[1])
			answer = "```json\n" + screenAgentJSON(steps[i-1], user) + "\n```"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "screenagent",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
			"usage":   map[string]any{"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// screenAgentJSON writes a gold action as ScreenAgent's function calls,
// an element target clicked at the centre of its row of the observation's
// accessibility table (role, name, text, x, y, w, h).
func screenAgentJSON(a action.Action, obs string) string {
	var calls []string
	click := func(t *action.Target, count int) {
		for _, row := range strings.Split(obs, "\n") {
			f := strings.Split(row, "\t")
			if len(f) != 7 || !observe.SameRole(f[0], t.Role) || t.Name != "" && f[1] != t.Name {
				continue
			}
			var x, y, w, h int
			fmt.Sscan(f[3]+" "+f[4]+" "+f[5]+" "+f[6], &x, &y, &w, &h)
			kind := "click"
			if count == 2 {
				kind = "double_click"
			}
			calls = append(calls, fmt.Sprintf(`{"action_type": "MouseAction", "mouse_action_type": %q, "mouse_button": "left", "mouse_position": {"width": %d, "height": %d}}`, kind, x+w/2, y+h/2))
			return
		}
	}
	switch a.Kind {
	case action.Click:
		click(a.Target, a.Count)
	case action.Type:
		if a.Target != nil {
			click(a.Target, 1)
		}
		calls = append(calls, fmt.Sprintf(`{"action_type": "KeyboardAction", "keyboard_action_type": "text", "keyboard_text": %s}`, jsonString(a.Text)))
	case action.Key:
		for _, k := range a.Keys {
			calls = append(calls, fmt.Sprintf(`{"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": %q}`, k))
		}
	case action.Hotkey:
		calls = append(calls, fmt.Sprintf(`{"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": %q}`, strings.Join(a.Keys, "+")))
	case action.Wait:
		calls = append(calls, fmt.Sprintf(`{"action_type": "WaitAction", "wait_time": %g}`, a.Duration))
	}
	return "[" + strings.Join(calls, ", ") + "]"
}

// successes counts the episodes a run's progress lines report successful.
func successes(progress string) int {
	return len(regexp.MustCompile(`% success +\S+ \(`).FindAllString(progress, -1))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
