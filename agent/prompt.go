package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// Prompting, shared by the model agents: a system prompt for the output
// format and the observation, then for each step the observation as text
// (and the screenshot as an image), with the agent's recent replies as
// history (ReAct: the thoughts stay in the history).

// PromptConfig chooses the prompt.
type PromptConfig struct {
	Format action.Format // pyautogui (default) or json
	// Unit is the convention of coordinates the model writes; empty:
	// pixels. SmartResize means pixels of the screenshot after the smart
	// resize, which the model is then shown.
	Unit action.Unit
	// MaxPixels is the pixel budget of the smart resize; 0:
	// DefaultMaxPixels.
	MaxPixels int
	// Screenshot and Tree say what the observation holds.
	Screenshot, Tree, Marks bool
	// Demonstrations puts the task's demonstrations in the prompt.
	Demonstrations bool
}

// PyAutoGUIRules tell a model how to answer in the pyautogui format.
const PyAutoGUIRules = `Answer with the Python code of your next actions in one fenced block:
` + "```python" + `
pyautogui.click(640, 360)
pyautogui.write('text to type')
` + "```" + `
Use only pyautogui calls (moveTo, click, doubleClick, rightClick, tripleClick, dragTo, scroll, hscroll, mouseDown, mouseUp, write, press, hotkey, keyDown, keyUp) and time.sleep, with literal arguments; the code is read, not run, so no variables, loops or other modules.
Instead of code you may answer one special code:
- DONE when the task is finished,
- FAIL when the task cannot be done (only when it truly cannot),
- WAIT or WAIT n to wait n seconds (5 by default),
- ANS followed by your answer when the task asks a question.`

// JSONRules tell a model how to answer in Proctor's JSON format.
const JSONRules = `Answer with a JSON array of your next actions in one fenced block, for example:
` + "```json" + `
[{"kind": "click", "point": {"x": 640, "y": 360}}, {"kind": "type", "text": "hello"}]
` + "```" + `
Kinds: move, click (button, count), drag (point, to), scroll (dx, dy), type (text), key (keys), hotkey (keys), wait (duration), done, fail, answer (text).`

// SystemPrompt is the system message for a task.
func SystemPrompt(pc PromptConfig, t Task) string {
	var b strings.Builder
	b.WriteString("You operate a Linux desktop to complete a task for a user. At each step you receive ")
	var parts []string
	if pc.Screenshot {
		if pc.Marks {
			parts = append(parts, "a screenshot where interactive elements carry numbered boxes")
		} else {
			parts = append(parts, "a screenshot")
		}
	}
	if pc.Tree {
		parts = append(parts, "the accessibility tree as a table (role, name, text, x, y, width, height)")
	}
	b.WriteString(strings.Join(parts, " and "))
	fmt.Fprintf(&b, ", and you answer with the next actions. The screen is %dx%d pixels", t.Screen.W, t.Screen.H)
	switch pc.Unit {
	case SmartResize:
		if sp, err := SpaceFor(t.Screen, pc); err == nil {
			fmt.Fprintf(&b, ", shown to you as a %dx%d screenshot; write coordinates in pixels of that screenshot", sp.Image.W, sp.Image.H)
		} else {
			b.WriteString("; write coordinates in pixels of the screenshot")
		}
	case action.Ratio:
		b.WriteString("; write coordinates as fractions of the screen from 0 to 1")
	case action.Thousand:
		b.WriteString("; write coordinates in thousandths of the screen, from 0 to 1000")
	default:
		b.WriteString("; write coordinates in pixels")
	}
	b.WriteString(".\n\nFirst think briefly about what you see and what you did, then give the actions.\n\n")
	if pc.Format == action.FormatJSON {
		b.WriteString(JSONRules)
	} else {
		b.WriteString(PyAutoGUIRules)
		if pc.Marks {
			b.WriteString("\nYou may use a mark's number instead of coordinates: pyautogui.click(tag_3).")
		}
	}
	fmt.Fprintf(&b, "\n\nThe task: %s", t.Instruction)
	if pc.Demonstrations && len(t.Demonstrations) > 0 {
		b.WriteString("\n\nHow similar tasks were done before:\n")
		for i, d := range t.Demonstrations {
			fmt.Fprintf(&b, "\nDemonstration %d:\n%s\n", i+1, strings.TrimSpace(d))
		}
	}
	return b.String()
}

// ObservationText is the text part of a step's user message.
func ObservationText(obs Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d.", obs.Step)
	if obs.Feedback != "" {
		fmt.Fprintf(&b, " Note: %s.", obs.Feedback)
	}
	if len(obs.Tabs) > 0 {
		b.WriteString("\nTabs:\n")
		for i, t := range obs.Tabs {
			active := ""
			if t.Active {
				active = " (active)"
			}
			fmt.Fprintf(&b, "%d: %s - %s%s\n", i+1, firstNonEmpty(t.Title, "(no title)"), t.URL, active)
		}
	}
	if len(obs.Marks) > 0 {
		b.WriteString("\nMarked elements (number: role name):\n")
		for _, m := range obs.Marks {
			fmt.Fprintf(&b, "%d: %s\n", m.Tag, strings.TrimSpace(m.Role+" "+firstNonEmpty(m.Name, m.Text)))
		}
	}
	if obs.Tree != "" {
		b.WriteString("\nAccessibility tree:\n")
		b.WriteString(obs.Tree)
	}
	return b.String()
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// PromptHash fingerprints a prompt configuration (with a placeholder
// task), so that runs made with different prompts are told apart.
func PromptHash(pc PromptConfig) string {
	s := SystemPrompt(pc, Task{Instruction: "{instruction}", Screen: action.Size{W: 1920, H: 1080}})
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
