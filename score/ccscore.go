package score

import (
	"sort"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/observe"
)

// CC-Score (ScreenAgent) compares a predicted action sequence with a gold
// one. Each gold action is worth points by its type; a predicted action
// aligned with it earns the points whose attributes agree. The alignment
// keeps both sequences' order and maximises the total (a weighted longest
// common subsequence), and the score is the total over the gold points.
//
// The rules follow ScreenAgent's reference implementation (client/action.py
// of its repository): a predicted scroll, or a move that names no button,
// has no button, so it never earns a gold click's button point; a
// predicted mouse action of any type earns the position point when its
// position lies in the gold box; keys are compared in ScreenAgent's
// spelling (Control_L+c, Return); a gold sequence worth no points has no
// score. CCOptions names the one variant kept from Proctor's own rules.
// Where parsing has normalised what the reference reads raw, the rules
// differ: a click that names no button is a left click (the unified
// space cannot tell it from one that names "left"), and keys are spelled
// from their canonical names (see screenAgentKeys).

// CCOptions chooses how CC-Score compares actions. The zero value follows
// ScreenAgent's reference implementation.
type CCOptions struct {
	// CanonicalKeys compares the keys of keyboard actions by Proctor's
	// canonical names joined with "+" ("ctrl+c", "enter") instead of
	// ScreenAgent's spelling ("Control_L+c", "Return"). Canonical names
	// are short, so the long shared name of a modifier does not lift the
	// BLEU of two different combinations ("Control_L+c" against
	// "Control_L+v" is 0.89, "ctrl+c" against "ctrl+v" 0.76).
	CanonicalKeys bool
}

// Action categories of CC-Score.
const (
	catMouse    = "mouse"
	catKeyboard = "keyboard"
	catWait     = "wait"
	catPlan     = "plan"
	catReflect  = "reflect"
	catOther    = "other"
)

type ccView struct {
	cat       string
	mouseType string // click, double_click, triple_click, drag, down, up, move, scroll_up, ...
	button    action.Button
	point     *action.Point // where a mouse action acts (a drag's end)
	text      string        // keys joined with "+", typed text, plan text, other detail
	situation string        // reflect: success or fail
}

func view(a action.Action, o CCOptions) ccView {
	v := ccView{cat: catOther}
	switch a.Kind {
	case action.Click, action.Drag, action.MouseDown, action.MouseUp:
		v.button = a.MouseButton() // the unified space's left when unset
	case action.Move:
		v.button = a.Button // a move presses nothing; a named button is kept
	}
	switch a.Kind {
	case action.Click:
		v.cat, v.point = catMouse, a.Point
		v.mouseType = map[int]string{1: "click", 2: "double_click", 3: "triple_click"}[a.Clicks()]
	case action.Drag:
		v.cat, v.mouseType, v.point = catMouse, "drag", a.To
	case action.MouseDown, action.MouseUp:
		v.cat, v.point = catMouse, a.Point
		v.mouseType = map[action.Kind]string{action.MouseDown: "down", action.MouseUp: "up"}[a.Kind]
	case action.Move:
		v.cat, v.mouseType, v.point = catMouse, "move", a.Point
	case action.Scroll:
		v.cat, v.point = catMouse, a.Point
		switch {
		case a.DY < 0 || a.Pages < 0:
			v.mouseType = "scroll_up"
		case a.DY > 0 || a.Pages > 0:
			v.mouseType = "scroll_down"
		case a.DX < 0:
			v.mouseType = "scroll_left"
		default:
			v.mouseType = "scroll_right"
		}
	case action.Type:
		v.cat, v.text = catKeyboard, a.Text
	case action.Key, action.Hotkey, action.KeyDown, action.KeyUp:
		v.cat = catKeyboard
		if o.CanonicalKeys {
			v.text = strings.Join(a.Keys, "+")
		} else {
			v.text = screenAgentKeys(a.Keys)
		}
	case action.Wait:
		v.cat = catWait
	case action.Plan:
		v.cat, v.text = catPlan, a.Text
	case action.Reflect:
		v.cat, v.situation = catReflect, "fail"
		if a.Text == "sub_task_success" {
			v.situation = "success"
		}
	default:
		v.text = string(a.Kind) + " " + a.Text + a.Name
	}
	return v
}

func (v ccView) hasButton() bool {
	switch v.mouseType {
	case "click", "double_click", "triple_click", "drag", "down", "up":
		return true
	}
	return false
}

func (v ccView) hasPosition() bool { return v.hasButton() || v.mouseType == "move" }

// Points is what a gold action is worth in CC-Score: mouse clicks, drags,
// presses and releases 4 (type, mouse type, button, position), moves 3,
// scrolls 2, keyboard actions 2 (type, keys or text), plans 2, reflections
// 1 (the situation), waits 0, and any other action 2 (kind, detail).
func Points(gold action.Action) float64 {
	v := view(gold, CCOptions{})
	switch v.cat {
	case catMouse:
		switch {
		case v.hasButton():
			return 4
		case v.mouseType == "move":
			return 3
		default:
			return 2
		}
	case catReflect:
		return 1
	case catWait:
		return 0
	default:
		return 2
	}
}

// attrs is the per-attribute agreement of one aligned pair; -1 means the
// attribute does not apply.
type attrs struct {
	typeOK, mouseTypeOK, buttonOK, positionOK, situationOK int
	textSim                                                float64 // -1 when not applicable
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func textSim(pred, gold string) float64 {
	if pred == gold {
		return 1
	}
	return CharBLEU(pred, gold)
}

// compare scores prediction p against gold g on a screen of size s; gv
// and pv are their views, sims caches text similarities.
func compare(g, p action.Action, gv, pv ccView, s action.Size, sims map[[2]string]float64) (float64, attrs) {
	at := attrs{-1, -1, -1, -1, -1, -1}
	if gv.cat == catReflect {
		if pv.cat != catReflect {
			return 0, at
		}
		at.situationOK = b2i(gv.situation == pv.situation)
		return float64(at.situationOK), at
	}
	if gv.cat == catWait {
		return 0, at
	}
	at.typeOK = b2i(gv.cat == pv.cat)
	if at.typeOK == 0 {
		return 0, at
	}
	score := 1.0
	switch gv.cat {
	case catMouse:
		at.mouseTypeOK = b2i(gv.mouseType == pv.mouseType)
		score += float64(at.mouseTypeOK)
		if gv.hasButton() {
			// A prediction without a button (a scroll, a move) has an
			// empty one, which no gold button equals.
			at.buttonOK = b2i(gv.button == pv.button)
			score += float64(at.buttonOK)
		}
		if gv.hasPosition() {
			// Whatever the predicted mouse type, its position counts
			// when it lies in the gold box.
			at.positionOK = 0
			if inside(g, p, gv.point, pv.point, s) {
				at.positionOK = 1
			}
			score += float64(at.positionOK)
		}
	case catKeyboard, catPlan, catOther:
		key := [2]string{pv.text, gv.text}
		sim, ok := sims[key]
		if !ok {
			sim = textSim(pv.text, gv.text)
			sims[key] = sim
		}
		at.textSim = sim
		score += sim
	}
	return score, at
}

// ElementArg is the key of action.Args under which a performed action
// carries the element it touched, as observe.Describe names it ("push
// button Save"): the runner's record of each click.
const ElementArg = "element"

// inside reports whether the predicted point lies in the gold box (edges
// included). A gold action aimed at an element by role and name has its
// element's box, known from what the prediction touched: the point is
// inside when the element under it is the one the target names (of the
// role, for a target that names only a role). Without a box, the gold
// point itself is the box.
func inside(g, p action.Action, gp, pp *action.Point, s action.Size) bool {
	if pp == nil {
		return false
	}
	if t := g.Target; g.Box == nil && t != nil && (strings.TrimSpace(t.Name) != "" || t.Role != "") {
		touched, _ := p.Args[ElementArg].(string)
		if strings.TrimSpace(t.Name) == "" {
			return touched == t.Role || strings.HasPrefix(touched, t.Role+" ")
		}
		return touched != "" && touched == observe.Describe(&observe.Node{Role: t.Role, Name: t.Name})
	}
	px, py, err := pp.Pixels(s)
	if err != nil {
		return false
	}
	if g.Box != nil {
		return g.Box.Contains(px, py)
	}
	if gp == nil {
		return false
	}
	gx, gy, err := gp.Pixels(s)
	return err == nil && gx == px && gy == py
}

// Pair is one aligned (gold, predicted) pair.
type Pair struct {
	Gold  int     `json:"gold"`
	Pred  int     `json:"pred"`
	Score float64 `json:"score"`
	at    attrs
	gv    ccView
	pv    ccView
}

// CCResult is the CC-Score of one predicted sequence.
type CCResult struct {
	// Score is in [0, 1] when Scored; a gold sequence worth no points
	// (only waits) has no score, as in ScreenAgent's reference, and
	// Score is then 0 and Scored false.
	Score  float64 `json:"score"`
	Scored bool    `json:"scored"`
	Earned float64 `json:"earned"` // points earned by the best alignment
	Points float64 `json:"points"` // points the gold sequence is worth
	Pairs  []Pair  `json:"pairs"`
}

// CCScore is CCScoreWith under ScreenAgent's reference rules.
func CCScore(gold, pred []action.Action, s action.Size) CCResult {
	return CCScoreWith(gold, pred, s, CCOptions{})
}

// CCScoreWith aligns pred with gold, keeping both orders, to maximise the
// summed similarity, and normalises by the gold points. Coordinates are
// compared in pixels on a screen of size s.
func CCScoreWith(gold, pred []action.Action, s action.Size, o CCOptions) CCResult {
	n, m := len(gold), len(pred)
	gv, pv := make([]ccView, n), make([]ccView, m)
	for i, g := range gold {
		gv[i] = view(g, o)
	}
	for j, p := range pred {
		pv[j] = view(p, o)
	}
	sims := map[[2]string]float64{}
	sim := make([][]float64, n)
	at := make([][]attrs, n)
	for i := range gold {
		sim[i] = make([]float64, m)
		at[i] = make([]attrs, m)
		for j := range pred {
			sim[i][j], at[i][j] = compare(gold[i], pred[j], gv[i], pv[j], s, sims)
		}
	}
	// d[i][j] is the best total for gold[:i] and pred[:j].
	d := make([][]float64, n+1)
	for i := range d {
		d[i] = make([]float64, m+1)
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			d[i][j] = max(d[i-1][j], d[i][j-1], d[i-1][j-1]+sim[i-1][j-1])
		}
	}
	res := CCResult{Earned: d[n][m]}
	for _, g := range gold {
		res.Points += Points(g)
	}
	if res.Points > 0 {
		res.Score, res.Scored = res.Earned/res.Points, true
	}
	// Walk back, preferring a diagonal step so that every gold action
	// facing a predicted one is paired (sub-metrics count mismatches too).
	for i, j := n, m; i > 0 && j > 0; {
		switch {
		case d[i][j] == d[i-1][j-1]+sim[i-1][j-1]:
			res.Pairs = append(res.Pairs, Pair{Gold: i - 1, Pred: j - 1, Score: sim[i-1][j-1],
				at: at[i-1][j-1], gv: gv[i-1], pv: pv[j-1]})
			i, j = i-1, j-1
		case d[i][j] == d[i-1][j]:
			i--
		default:
			j--
		}
	}
	for l, r := 0, len(res.Pairs)-1; l < r; l, r = l+1, r-1 {
		res.Pairs[l], res.Pairs[r] = res.Pairs[r], res.Pairs[l]
	}
	return res
}

// CCMetrics are CC-Score and its sub-metrics over many sequences.
type CCMetrics struct {
	CCScore          float64 `json:"cc_score"`           // mean CC-Score over the scored sequences
	PlanBLEU         float64 `json:"plan_bleu"`          // mean text similarity of aligned plans
	ActionTypeF1     float64 `json:"action_type_f1"`     // macro F1 of action categories
	MouseTypeF1      float64 `json:"mouse_type_f1"`      // macro F1 of mouse action types
	MouseButtonF1    float64 `json:"mouse_button_f1"`    // macro F1 of buttons
	MousePositionAcc float64 `json:"mouse_position_acc"` // share of positions inside the gold box
	KeyboardBLEU     float64 `json:"keyboard_bleu"`      // mean similarity of keys or text
	ReflectF1        float64 `json:"reflect_f1"`         // macro F1 of the situation assessments
	Sequences        int     `json:"sequences"`          // sequences with a score
	// NoPoints counts the sequences whose gold is worth no points: they
	// have no score and are left out of every figure above.
	NoPoints int `json:"no_points"`
	// The aligned pairs each sub-metric was computed over: one over none
	// (plan BLEU where the gold has no plans) is no score, not a score of
	// 0.
	TypePairs     int `json:"type_pairs"`
	PlanPairs     int `json:"plan_pairs"`
	MousePairs    int `json:"mouse_pairs"`
	ButtonPairs   int `json:"button_pairs"`
	PositionPairs int `json:"position_pairs"`
	KeyboardPairs int `json:"keyboard_pairs"`
	ReflectPairs  int `json:"reflect_pairs"`
}

// Aggregate computes the sub-metrics over the aligned pairs of many
// results; results without a score are only counted (NoPoints).
func Aggregate(results []CCResult) CCMetrics {
	var m CCMetrics
	var typeG, typeP, mtG, mtP, btG, btP, rfG, rfP []string
	var planSum, kbSum float64
	var planN, kbN, posN, posOK int
	for _, r := range results {
		if !r.Scored {
			m.NoPoints++
			continue
		}
		m.Sequences++
		m.CCScore += r.Score
		for _, p := range r.Pairs {
			if p.gv.cat != catReflect && p.gv.cat != catWait {
				typeG, typeP = append(typeG, p.gv.cat), append(typeP, p.pv.cat)
			}
			if p.gv.cat == catMouse && p.pv.cat == catMouse {
				mtG, mtP = append(mtG, p.gv.mouseType), append(mtP, p.pv.mouseType)
				if p.at.buttonOK >= 0 {
					btG, btP = append(btG, string(p.gv.button)), append(btP, string(p.pv.button))
				}
				if p.at.positionOK >= 0 {
					posN++
					posOK += p.at.positionOK
				}
			}
			if p.gv.cat == catReflect && p.pv.cat == catReflect {
				rfG, rfP = append(rfG, p.gv.situation), append(rfP, p.pv.situation)
			}
			if p.at.textSim >= 0 && p.gv.cat == catPlan {
				planSum += p.at.textSim
				planN++
			}
			if p.at.textSim >= 0 && p.gv.cat == catKeyboard {
				kbSum += p.at.textSim
				kbN++
			}
		}
	}
	if m.Sequences > 0 {
		m.CCScore /= float64(m.Sequences)
	}
	if planN > 0 {
		m.PlanBLEU = planSum / float64(planN)
	}
	if kbN > 0 {
		m.KeyboardBLEU = kbSum / float64(kbN)
	}
	if posN > 0 {
		m.MousePositionAcc = float64(posOK) / float64(posN)
	}
	m.ActionTypeF1 = MacroF1(typeG, typeP)
	m.MouseTypeF1 = MacroF1(mtG, mtP)
	m.MouseButtonF1 = MacroF1(btG, btP)
	m.ReflectF1 = MacroF1(rfG, rfP)
	m.TypePairs, m.PlanPairs, m.MousePairs, m.ButtonPairs = len(typeG), planN, len(mtG), len(btG)
	m.PositionPairs, m.KeyboardPairs, m.ReflectPairs = posN, kbN, len(rfG)
	return m
}

// MacroF1 is the unweighted mean over labels of each label's F1, for paired
// gold and predicted labels. It is 0 for no pairs.
func MacroF1(gold, pred []string) float64 {
	if len(gold) == 0 || len(gold) != len(pred) {
		return 0
	}
	tp, gc, pc := map[string]int{}, map[string]int{}, map[string]int{}
	labels := map[string]bool{}
	for i := range gold {
		gc[gold[i]]++
		pc[pred[i]]++
		labels[gold[i]], labels[pred[i]] = true, true
		if gold[i] == pred[i] {
			tp[gold[i]]++
		}
	}
	keys := make([]string, 0, len(labels))
	for l := range labels {
		keys = append(keys, l)
	}
	sort.Strings(keys)
	sum := 0.0
	for _, l := range keys {
		if tp[l] == 0 {
			continue
		}
		p := float64(tp[l]) / float64(pc[l])
		r := float64(tp[l]) / float64(gc[l])
		sum += 2 * p * r / (p + r)
	}
	return sum / float64(len(keys))
}
