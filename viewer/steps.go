package viewer

import (
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/store"
)

// stepBars is a chart of an episode's steps: each step a stacked bar of
// its parts (seconds of model, environment and settle time; or tokens in
// and out), with a legend, the axis ticked at round numbers, and the
// step's figures in its tooltip.
func stepBars(title, unit string, steps []store.Turn, parts []string, colours []string, value func(store.Turn) []float64, format func(float64) string) template.HTML {
	const W, plotH, L, R, T, B = 520, 200, 56, 12, 30, 34
	if len(steps) == 0 {
		return ""
	}
	top := 0.0
	vals := make([][]float64, len(steps))
	for i, st := range steps {
		vals[i] = value(st)
		sum := 0.0
		for _, v := range vals[i] {
			sum += v
		}
		top = math.Max(top, sum)
	}
	step := niceStep(top / 4)
	top = step * math.Ceil(top/step)
	if top == 0 {
		top, step = 1, 0.25
	}
	H := plotH + 24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot steps" viewBox="0 0 %d %d" role="img" aria-label="%s"><title>%s</title>`, W, H, html.EscapeString(title), html.EscapeString(title))
	fmt.Fprintf(&b, `<text class="pt-title" x="%d" y="16">%s</text>`, L, html.EscapeString(title))
	py := func(v float64) float64 { return float64(plotH-B) - float64(plotH-T-B)*v/top }
	for v := 0.0; v <= top+step/2; v += step {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			L, py(v), W-R, py(v), L-6, py(v)+4, html.EscapeString(format(v)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, L, plotH-B, W-R, plotH-B)
	slot := float64(W-L-R) / float64(len(steps))
	bw := math.Max(2, math.Min(40, slot*0.7))
	every := int(math.Ceil(float64(len(steps)) / 20)) // at most 20 step numbers under the axis
	for i, st := range steps {
		x := float64(L) + slot*float64(i) + (slot-bw)/2
		y := float64(plotH - B)
		var tip []string
		for j, v := range vals[i] {
			h := float64(plotH-T-B) * v / top
			y -= h
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x, y, bw, h, colours[j])
			tip = append(tip, parts[j]+" "+format(v))
		}
		fmt.Fprintf(&b, `<rect class="hit" x="%.1f" y="%d" width="%.1f" height="%d" fill="transparent"><title>step %d: %s</title></rect>`,
			x, T, bw, plotH-T-B, st.Index, html.EscapeString(strings.Join(tip, ", ")))
		if i%every == 0 {
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%d</text>`, x+bw/2, plotH-B+14, st.Index)
		}
	}
	fmt.Fprintf(&b, `<text class="label" x="%d" y="%d" text-anchor="middle">step (%s)</text>`, (L+W-R)/2, plotH-4, html.EscapeString(unit))
	for j, p := range parts {
		x := L + j*130
		fmt.Fprintf(&b, `<g class="legend-item"><rect x="%d" y="%d" width="10" height="10" fill="%s"/><text class="legend" x="%d" y="%d">%s</text></g>`,
			x, plotH+8, colours[j], x+14, plotH+17, html.EscapeString(p))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceStep rounds a tick interval up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// settle is how long the environment waited for the screen to settle
// after the step (recorded on the turn's last action).
func settle(st store.Turn) time.Duration {
	var done []action.Step
	if json.Unmarshal(st.Done, &done) != nil || len(done) == 0 {
		return 0
	}
	return done[len(done)-1].Settle
}

// timingChart is each step's model, environment and settle time.
func timingChart(steps []store.Turn) template.HTML {
	return stepBars("Time per step", "seconds", steps, []string{"model", "environment", "settle"},
		[]string{"#0a84ff", "#ff9f0a", "#30d158"}, func(st store.Turn) []float64 {
			s := settle(st)
			env := st.EnvLatency - s
			if env < 0 {
				env = st.EnvLatency
			}
			return []float64{st.ModelLatency.Seconds(), env.Seconds(), s.Seconds()}
		}, func(v float64) string { return fmt.Sprintf("%.3gs", v) })
}

// tokenChart is each step's input and output tokens.
func tokenChart(steps []store.Turn) template.HTML {
	any := false
	for _, st := range steps {
		any = any || st.InputTokens+st.OutputTokens > 0
	}
	if !any {
		return ""
	}
	return stepBars("Tokens per step", "tokens", steps, []string{"input", "output"}, []string{"#5e5ce6", "#ff375f"},
		func(st store.Turn) []float64 { return []float64{float64(st.InputTokens), float64(st.OutputTokens)} },
		func(v float64) string {
			if v >= 1000 {
				return fmt.Sprintf("%.3gk", v/1000)
			}
			return fmt.Sprintf("%.0f", v)
		})
}

// costChart is each step's cost, split by model where the agent asks
// several (a planner and a grounder); empty when nothing was spent.
func costChart(steps []store.Turn) template.HTML {
	spent := false
	var parts []string
	split := make([]map[string]float64, len(steps))
	for i, st := range steps {
		spent = spent || st.Cost > 0
		var ms []modelUsage
		if len(st.Models) == 0 || json.Unmarshal(st.Models, &ms) != nil {
			continue
		}
		split[i] = map[string]float64{}
		for _, m := range ms {
			name := strings.TrimSpace(m.Role + " " + m.Model)
			if !slices.Contains(parts, name) {
				parts = append(parts, name)
			}
			split[i][name] += m.Cost
		}
	}
	if !spent {
		return ""
	}
	// Steps recorded without a split, or whose split falls short of their
	// cost, show the rest apart.
	const rest = "cost"
	for i, st := range steps {
		sum := 0.0
		for _, v := range split[i] {
			sum += v
		}
		if st.Cost-sum > 1e-9 && !slices.Contains(parts, rest) {
			parts = append(parts, rest)
		}
	}
	colours := []string{"#34c759", "#af52de", "#ff9500", "#5ac8fa", "#8e8e93"}
	for len(colours) < len(parts) {
		colours = append(colours, colours...)
	}
	return stepBars("Cost per step", "USD", steps, parts, colours[:len(parts)], func(st store.Turn) []float64 {
		i := slices.IndexFunc(steps, func(s store.Turn) bool { return s.Index == st.Index })
		out := make([]float64, len(parts))
		sum := 0.0
		for j, p := range parts {
			if i >= 0 && split[i] != nil {
				out[j] = split[i][p]
				sum += out[j]
			}
		}
		if j := slices.Index(parts, rest); j >= 0 && st.Cost-sum > 1e-9 {
			out[j] = st.Cost - sum
		}
		return out
	}, func(v float64) string { return "$" + strconv.FormatFloat(v, 'g', 3, 64) })
}
