package openai

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/agent"
)

// screenagentRules is ScreenAgent's acting format: JSON function calls.
const screenagentRules = `Answer with a JSON list of your next actions in one fenced block, for example:
` + "```json" + `
[{"action_type": "MouseAction", "mouse_action_type": "click", "mouse_button": "left", "mouse_position": {"width": 640, "height": 360}},
 {"action_type": "KeyboardAction", "keyboard_action_type": "text", "keyboard_text": "hello"},
 {"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": "Control_L+s"}]
` + "```" + `
mouse_position is in pixels of the screenshot (width across, height down). mouse_action_type is one of click, double_click, move, drag, down, up, scroll_up, scroll_down (with scroll_repeat); keyboard_action_type is text or press (keys as X keysym names joined by +); {"action_type": "WaitAction", "wait_time": 1} waits.`

// screenagentPlanRules is ScreenAgent's planning format.
const screenagentPlanRules = `Answer with a JSON list of PlanAction objects in one fenced block, one a sub-task, in order, for example:
` + "```json" + `
[{"action_type": "PlanAction", "element": "Open the File menu"}, {"action_type": "PlanAction", "element": "Click Save"}]
` + "```" + `
Answer FAIL instead if the task cannot be done.`

// screenagentReflectRules is ScreenAgent's reflecting format.
const screenagentReflectRules = `Answer with one EvaluateSubTaskAction object in a fenced block: its situation is sub_task_success, need_retry or need_reformulate, its advice what to do differently, for example:
` + "```json" + `
{"action_type": "EvaluateSubTaskAction", "situation": "need_retry", "advice": "The menu did not open; click the File label itself."}
` + "```"

// specialCodes returns the special codes (DONE, FAIL, WAIT n, ANS s) that
// stand on lines of their own in text, if any.
func specialCodes(text string) []action.Action {
	acts, err := action.Parse(action.FormatPyAutoGUI, text, action.Options{})
	if err != nil {
		return nil
	}
	for _, a := range acts {
		if !a.Kind.Terminal() && a.Kind != action.Wait {
			return nil
		}
	}
	return acts
}

// PlannerGrounder splits the work between two models: a planner that sees
// the screen and says in words what to do next (or DONE, FAIL, WAIT, ANS),
// and a grounding model that turns that sentence into coordinates in its
// own output format and scale (ScienceBoard's planner plus grounder).
type PlannerGrounder struct {
	Planner, Grounder agent.ModelConfig
	planner, grounder *OpenAI
	task              agent.Task
	plans             []string
}

const plannerRules = `Say in one sentence the single next action a person should take, naming the element and where it is (for example: "Click the Save button in the toolbar at the top left", or "Type 'report' into the file name field").
Instead, answer DONE when the task is finished, FAIL when it cannot be done, WAIT to wait, or ANS followed by the answer when the task asks a question.`

// groundingRules tell the grounding model how to answer, by format.
func groundingRules(f action.Format, unit action.Unit) string {
	scale := "in pixels"
	switch unit {
	case agent.SmartResize:
		scale = "in pixels of the screenshot"
	case action.Thousand:
		scale = "from 0 to 1000 on each axis"
	case action.Ratio:
		scale = "as fractions of the screen from 0 to 1"
	}
	switch f {
	case action.FormatOSAtlas:
		return "Answer with one action: CLICK <point>[[x, y]]</point>, TYPE [text] or SCROLL [UP|DOWN|LEFT|RIGHT]. Coordinates are " + scale + "."
	case action.FormatUITARS:
		return "Answer with one line: Action: click(start_box='(x,y)'), left_double(start_box='(x,y)'), right_single(start_box='(x,y)'), type(content='text'), hotkey(key='ctrl s') or scroll(start_box='(x,y)', direction='down'). Coordinates are " + scale + "."
	}
	return agent.PyAutoGUIRules + "\nCoordinates are " + scale + "."
}

// Start prepares both models.
func (p *PlannerGrounder) Start(ctx context.Context, t agent.Task) error {
	var err error
	if p.planner, err = NewOpenAI(p.Planner); err != nil {
		return fmt.Errorf("planner: %w", err)
	}
	if p.grounder, err = NewOpenAI(p.Grounder); err != nil {
		return fmt.Errorf("grounder: %w", err)
	}
	p.planner.task, p.grounder.task = t, t // their screen, for an observation that names none
	p.task, p.plans = t, nil
	return nil
}

// Next asks the planner, then the grounding model.
func (p *PlannerGrounder) Next(ctx context.Context, obs agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	system := fmt.Sprintf("You plan the work of an agent operating a Linux desktop (screen %dx%d) for this task: %s\n\n%s",
		obs.Screen.W, obs.Screen.H, p.task.Instruction, plannerRules)
	if p.Planner.Prompt.Demonstrations && len(p.task.Demonstrations) > 0 {
		system += "\n\nHow similar tasks were done before:\n" + strings.Join(p.task.Demonstrations, "\n")
	}
	past := p.plans[max(0, len(p.plans)-p.planner.cfg.History):]
	pv, psp, err := p.planner.view(obs)
	if err != nil {
		return agent.Turn{}, fmt.Errorf("planner: %w", err)
	}
	plan, u1, l1, sent, err := p.planner.ask(ctx, system, past, agent.ObservationText(pv), pv)
	if err != nil {
		return agent.Turn{}, fmt.Errorf("planner: %w", err)
	}
	plan = strings.TrimSpace(plan)
	p.plans = append(p.plans, plan)
	turn := agent.Turn{Raw: plan, Thought: action.Thought(plan), Usage: u1, Latency: l1, Space: &psp, Prompt: roles("planner", sent)}
	if codes := specialCodes(plan); codes != nil {
		turn.Actions = codes
		return turn, nil
	}
	if plan == "" {
		turn.ParseError = "the planner said nothing"
		return turn, nil
	}
	g := p.grounder.cfg.Prompt
	gv, gsp, err := p.grounder.view(obs)
	if err != nil {
		return agent.Turn{}, fmt.Errorf("grounder: %w", err)
	}
	gsys := fmt.Sprintf("You locate elements on a screenshot of a %dx%d screen and answer with the action that carries out an instruction.\n%s",
		gsp.Image.W, gsp.Image.H, groundingRules(g.Format, g.Unit))
	ground, u2, l2, gsent, err := p.grounder.ask(ctx, gsys, nil, "Instruction: "+plan, gv)
	if err != nil {
		return agent.Turn{}, fmt.Errorf("grounder: %w", err)
	}
	turn.Prompt = append(turn.Prompt, roles("grounder", gsent)...)
	turn.Raw += "\n---\n" + ground
	turn.Usage, turn.Latency, turn.Space = turn.Usage.Add(u2), turn.Latency+l2, &gsp
	turn.Models = []agent.ModelUsage{{Role: "planner", Model: p.planner.cfg.Model, Usage: u1}, {Role: "grounder", Model: p.grounder.cfg.Model, Usage: u2}}
	acts, perr := parseIn(gsp, g.Format, ground)
	if perr != "" {
		turn.ParseError = "grounding: " + perr
		return turn, nil
	}
	turn.Actions = append([]action.Action{{Kind: action.Plan, Text: plan}}, acts...)
	return turn, nil
}

// Stop does nothing.
func (p *PlannerGrounder) Stop(context.Context) error { return nil }

// Reflect is ScreenAgent's plan, act, reflect pipeline: plan the task as
// sub-tasks, act on the current one, then judge the result on the next
// screenshot (sub_task_success, need_retry, need_reformulate) and go on,
// retry with the advice (at most MaxRetries times) or plan again. With
// Model.Prompt.Format screenagent, every phase speaks ScreenAgent's JSON
// function calls (PlanAction, MouseAction and KeyboardAction,
// EvaluateSubTaskAction); else it acts in pyautogui or json and plans and
// judges in plain lines.
type Reflect struct {
	Model      agent.ModelConfig
	MaxRetries int // retries of one sub-task before planning again; default 3
	m          *OpenAI
	task       agent.Task
	plan       []string
	current    int
	retries    int
	acted      bool
	advice     string
}

// Probe asks the model one small question (agent.Prober).
func (r *Reflect) Probe(ctx context.Context) error {
	m, err := NewOpenAI(r.Model)
	if err != nil {
		return err
	}
	return m.Probe(ctx)
}

// Probe asks the planner and the grounder one small question each
// (agent.Prober).
func (p *PlannerGrounder) Probe(ctx context.Context) error {
	for _, c := range []struct {
		role string
		cfg  agent.ModelConfig
	}{{"planner", p.Planner}, {"grounder", p.Grounder}} {
		m, err := NewOpenAI(c.cfg)
		if err == nil {
			err = m.Probe(ctx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.role, err)
		}
	}
	return nil
}

// Start prepares the model.
func (r *Reflect) Start(ctx context.Context, t agent.Task) error {
	m, err := NewOpenAI(r.Model)
	if err != nil {
		return err
	}
	if r.MaxRetries == 0 {
		r.MaxRetries = 3
	}
	m.task = t
	r.m, r.task, r.plan, r.current, r.retries, r.acted, r.advice = m, t, nil, 0, 0, false, ""
	return nil
}

// system is the system message of one role; the screen's size is the
// size of the screenshot the model is shown.
func (r *Reflect) system(role string, sp agent.Space) string {
	return fmt.Sprintf("You %s for an agent operating a Linux desktop (screen %dx%d). The task: %s",
		role, sp.Image.W, sp.Image.H, r.task.Instruction)
}

// Next plans when there is no plan, reflects on the last action when
// there was one, and acts on the current sub-task.
func (r *Reflect) Next(ctx context.Context, obs agent.Observation, _ []agent.Turn) (agent.Turn, error) {
	v, sp, err := r.m.view(obs)
	if err != nil {
		return agent.Turn{}, err
	}
	turn := agent.Turn{Space: &sp}
	ask := func(system, text string) (string, error) {
		out, u, l, sent, err := r.m.ask(ctx, system, nil, text, v)
		turn.Usage, turn.Latency = turn.Usage.Add(u), turn.Latency+l
		turn.Prompt = append(turn.Prompt, sent...)
		turn.Raw += out + "\n---\n"
		return strings.TrimSpace(out), err
	}
	sa := r.Model.Prompt.Format == action.FormatScreenAgent
	if r.acted {
		r.acted = false
		text := fmt.Sprintf("The sub-task was: %s\n", r.plan[r.current])
		if sa {
			text += "Looking at the screen now, judge whether the last actions did it.\n" + screenagentReflectRules
		} else {
			text += "Looking at the screen now, answer on the first line one of sub_task_success, need_retry or need_reformulate, and on the next lines your advice."
		}
		out, err := ask(r.system("judge the last action's result", sp), text+"\n"+agent.ObservationText(v))
		if err != nil {
			return agent.Turn{}, err
		}
		refl, perr := reflection(out, sa)
		if perr != "" {
			turn.ParseError = perr
			return turn, nil
		}
		r.advice, _ = refl.Args["advice"].(string)
		switch refl.Text {
		case "sub_task_success":
			r.current, r.retries = r.current+1, 0
		case "need_retry":
			r.retries++
			if r.retries > r.MaxRetries {
				r.plan = nil // too many retries: plan again
			}
		case "need_reformulate":
			r.plan = nil
		}
		turn.Actions = append(turn.Actions, refl)
		if r.plan != nil && r.current >= len(r.plan) {
			turn.Actions = append(turn.Actions, action.Action{Kind: action.Done})
			return turn, nil
		}
	}
	if r.plan == nil {
		text := "List the sub-tasks that complete the task, one a line, in order. Answer FAIL if the task cannot be done."
		if sa {
			text = screenagentPlanRules
		}
		if r.advice != "" {
			text += "\nAdvice from the last attempt: " + r.advice
		}
		out, err := ask(r.system("plan the work", sp), text+"\n"+agent.ObservationText(v))
		if err != nil {
			return agent.Turn{}, err
		}
		if codes := specialCodes(out); codes != nil {
			turn.Actions = append(turn.Actions, codes...)
			return turn, nil
		}
		plan, perr := subTasks(out, sa)
		if perr != "" {
			turn.ParseError = perr
			return turn, nil
		}
		r.plan, r.current, r.retries = plan, 0, 0
		turn.Actions = append(turn.Actions, action.Action{Kind: action.Plan, Text: strings.Join(r.plan, "\n")})
	}
	text := "Current sub-task: " + r.plan[r.current]
	if r.advice != "" && r.retries > 0 {
		text += "\nAdvice: " + r.advice
	}
	format, rules := action.FormatPyAutoGUI, agent.PyAutoGUIRules
	switch r.Model.Prompt.Format {
	case action.FormatJSON:
		format, rules = action.FormatJSON, agent.JSONRules
	case action.FormatScreenAgent:
		format, rules = action.FormatScreenAgent, screenagentRules
	}
	out, err := ask(r.system("act", sp)+"\n\n"+rules, text+"\n"+agent.ObservationText(v))
	if err != nil {
		return agent.Turn{}, err
	}
	acts, perr := parseIn(sp, format, out)
	if perr != "" {
		turn.ParseError = perr
		return turn, nil
	}
	r.acted = true
	turn.Actions = append(turn.Actions, acts...)
	return turn, nil
}

// reflection reads the judgement of a sub-task: ScreenAgent's
// EvaluateSubTaskAction (sa), or the situation on the first line and the
// advice on the next ones. It returns a reflect action, or why not.
func reflection(out string, sa bool) (action.Action, string) {
	if sa {
		acts, err := action.Parse(action.FormatScreenAgent, out, action.Options{})
		if err != nil {
			return action.Action{}, err.Error()
		}
		if len(acts) != 1 || acts[0].Kind != action.Reflect {
			return action.Action{}, fmt.Sprintf("the reflection is %d actions, not one EvaluateSubTaskAction", len(acts))
		}
		return acts[0], ""
	}
	situation, advice, _ := strings.Cut(out, "\n")
	situation = strings.TrimSpace(situation)
	switch situation {
	case "sub_task_success", "need_retry", "need_reformulate":
	default:
		return action.Action{}, fmt.Sprintf("the reflection %q is none of sub_task_success, need_retry, need_reformulate", situation)
	}
	refl := action.Action{Kind: action.Reflect, Text: situation}
	if advice = strings.TrimSpace(advice); advice != "" {
		refl.Args = map[string]any{"advice": advice}
	}
	return refl, ""
}

// subTasks reads a plan: ScreenAgent's PlanAction objects (sa), or one
// sub-task a line, numbered or bulleted or not.
func subTasks(out string, sa bool) ([]string, string) {
	var plan []string
	if sa {
		acts, err := action.Parse(action.FormatScreenAgent, out, action.Options{})
		if err != nil {
			return nil, err.Error()
		}
		for _, a := range acts {
			if a.Kind != action.Plan {
				return nil, fmt.Sprintf("the plan holds a %s, not only PlanAction objects", a.Kind)
			}
			for _, l := range strings.Split(a.Text, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					plan = append(plan, l)
				}
			}
		}
	} else {
		for _, line := range strings.Split(out, "\n") {
			if l := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*0123456789.) ")); l != "" {
				plan = append(plan, l)
			}
		}
	}
	if len(plan) == 0 {
		return nil, "the plan is empty"
	}
	return plan, ""
}

// Stop does nothing.
func (r *Reflect) Stop(context.Context) error { return nil }

func init() {
	agent.Register("planner-grounder", agent.Def{Summary: "--model plans in words, --grounder-model finds the coordinates in its --grounder-format and --grounder-unit",
		Model: true,
		New: func(o agent.Options) (agent.Factory, error) {
			planner, err := agent.ModelConfigOf("planner-grounder", o)
			if err != nil {
				return nil, err
			}
			m := o.Model
			g := planner
			g.Model, g.Prompt = m.GrounderModel, agent.PromptConfig{Format: action.Format(m.GrounderFormat), Unit: action.Unit(m.GrounderUnit), MaxPixels: m.MaxPixels}
			if m.GrounderBaseURL != "" {
				g.BaseURL = m.GrounderBaseURL
			}
			switch g.Prompt.Format {
			case action.FormatOSAtlas, action.FormatUITARS, action.FormatPyAutoGUI:
			default:
				return nil, fmt.Errorf("--grounder-format %q: osatlas, uitars or pyautogui", m.GrounderFormat)
			}
			switch g.Prompt.Unit {
			case "", action.Pixels, action.Ratio, action.Thousand, agent.SmartResize:
			default:
				return nil, fmt.Errorf("--grounder-unit %q: px, ratio, k or smart-resize", m.GrounderUnit)
			}
			if g.Model == "" {
				return nil, errors.New("--agent planner-grounder needs --grounder-model")
			}
			return agent.Checked(func() (agent.Agent, error) {
				// Both clients are made here only to check the keys; Start
				// makes the episode's own.
				if _, err := NewOpenAI(planner); err != nil {
					return nil, fmt.Errorf("planner: %w", err)
				}
				if _, err := NewOpenAI(g); err != nil {
					return nil, fmt.Errorf("grounder: %w", err)
				}
				return &PlannerGrounder{Planner: planner, Grounder: g}, nil
			})
		}})
	agent.Register("reflect", agent.Def{Summary: "plans, acts and reflects on each sub-task, retrying one at most --max-retries times",
		Model: true,
		New: func(o agent.Options) (agent.Factory, error) {
			cfg, err := agent.ModelConfigOf("reflect", o)
			if err != nil {
				return nil, err
			}
			return agent.Checked(func() (agent.Agent, error) {
				if _, err := NewOpenAI(cfg); err != nil { // the key, checked before Start needs it
					return nil, err
				}
				return &Reflect{Model: cfg, MaxRetries: o.Model.MaxRetries}, nil
			})
		}})
}

// roles names the model a pipeline's messages went to: "planner: system".
func roles(model string, msgs []agent.PromptMessage) []agent.PromptMessage {
	out := make([]agent.PromptMessage, len(msgs))
	for i, m := range msgs {
		m.Role = model + ": " + m.Role
		out[i] = m
	}
	return out
}
