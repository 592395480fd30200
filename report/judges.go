package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/proctor-eval/proctor/agreement"
	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/usage"
)

// Trust is how far one judge of a run's judge checks agrees with the
// people who reviewed the episodes and with the rule-based checks of the
// same tasks (OSUniverse's and ProBench's figures, for this run).
type Trust struct {
	Judge    string `json:"judge"`
	Episodes int    `json:"episodes"` // decided
	// Undecided counts episodes the judge gave no verdict on (down,
	// malformed, refused).
	Undecided int         `json:"undecided"`
	Usage     usage.Usage `json:"usage"` // what it spent (cached verdicts cost nothing)
	// VsHuman compares the judge's episode verdict (every judge check
	// passed) with the episode's review; VsRules with the task's other
	// checks, on the tasks that have both.
	VsHuman    agreement.Stats `json:"vs_human"`
	VsRules    agreement.Stats `json:"vs_rules"`
	ByEvidence []EvidenceTrust `json:"by_evidence"`
}

// EvidenceTrust is the comparison of one evidence kind's judge checks.
type EvidenceTrust struct {
	Evidence string          `json:"evidence"`
	VsHuman  agreement.Stats `json:"vs_human"`
	VsRules  agreement.Stats `json:"vs_rules"`
}

// episodeKey names an episode.
type episodeKey struct {
	task   string
	repeat int
}

// rulePass is the verdict of an episode's rule-based checks (every check
// that is not a judge, milestones' included); ok is false where there is
// none.
func rulePass(r store.Result) (pass, ok bool) {
	var v check.Verdict
	if len(r.Verdict) == 0 || json.Unmarshal(r.Verdict, &v) != nil {
		return false, false
	}
	pass = true
	each := func(rs []check.Result) {
		for _, c := range rs {
			if c.Kind == check.JudgeKind {
				continue
			}
			ok = true
			pass = pass && c.Pass
		}
	}
	for _, m := range v.Milestones {
		each(m.Checks)
	}
	each(v.Checks)
	return pass, ok
}

// MakeTrust compares each judge of the judgements with the reviews and
// the rule-based checks of the results; judges in name order.
func MakeTrust(js []store.Judgement, rs []store.Result, reviews map[store.ReviewKey]store.Review) []Trust {
	results := map[episodeKey]store.Result{}
	for _, r := range rs {
		results[episodeKey{r.Task, r.Repeat}] = r
	}
	type acc struct {
		t                    Trust
		human, rules         []agreement.Pair
		humanByEv, rulesByEv map[string][]agreement.Pair
		evidence             []string
	}
	by := map[string]*acc{}
	var names []string
	for _, j := range js {
		a := by[j.Judge]
		if a == nil {
			a = &acc{t: Trust{Judge: j.Judge}, humanByEv: map[string][]agreement.Pair{}, rulesByEv: map[string][]agreement.Pair{}}
			by[j.Judge] = a
			names = append(names, j.Judge)
		}
		for _, c := range j.Checks {
			if c.Judge != nil {
				a.t.Usage = a.t.Usage.Add(c.Judge.Usage)
			}
		}
		pass, decided := j.Pass()
		if !decided {
			a.t.Undecided++
			continue
		}
		a.t.Episodes++
		k := episodeKey{j.Task, j.Repeat}
		rev, reviewed := reviews[store.ReviewKey{Task: j.Task, Repeat: j.Repeat}]
		rule, ruled := false, false
		if r, ok := results[k]; ok {
			rule, ruled = rulePass(r)
		}
		if reviewed {
			a.human = append(a.human, agreement.Pair{Task: j.Task, Repeat: j.Repeat, A: pass, B: rev.Pass})
		}
		if ruled {
			a.rules = append(a.rules, agreement.Pair{Task: j.Task, Repeat: j.Repeat, A: pass, B: rule})
		}
		for _, c := range j.Checks {
			ev := c.Judge.Evidence
			if !slices.Contains(a.evidence, ev) {
				a.evidence = append(a.evidence, ev)
			}
			p := agreement.Pair{Task: j.Task, Repeat: j.Repeat, Label: c.Name, A: c.Pass}
			if reviewed {
				p.B = rev.Pass
				a.humanByEv[ev] = append(a.humanByEv[ev], p)
			}
			if ruled {
				p.B = rule
				a.rulesByEv[ev] = append(a.rulesByEv[ev], p)
			}
		}
	}
	slices.Sort(names)
	var out []Trust
	for _, n := range names {
		a := by[n]
		a.t.VsHuman, a.t.VsRules = agreement.Compare(a.human), agreement.Compare(a.rules)
		slices.SortFunc(a.evidence, func(x, y string) int {
			return slices.Index(check.JudgeEvidence, x) - slices.Index(check.JudgeEvidence, y)
		})
		for _, ev := range a.evidence {
			a.t.ByEvidence = append(a.t.ByEvidence, EvidenceTrust{Evidence: ev,
				VsHuman: agreement.Compare(a.humanByEv[ev]), VsRules: agreement.Compare(a.rulesByEv[ev])})
		}
		out = append(out, a.t)
	}
	return out
}

// writeControls renders the judges' answers on their controls: a table
// per run that asked some, titled with how many each judge got right.
func writeControls(rs []*Report, table func(string, []string, [][]string)) {
	for _, r := range rs {
		if len(r.Controls) == 0 {
			continue
		}
		right := map[string]int{}
		all := map[string]int{}
		var judges []string
		var rows [][]string
		for _, c := range r.Controls {
			if all[c.Judge] == 0 {
				judges = append(judges, c.Judge)
			}
			all[c.Judge]++
			mark, said := "yes", word(c.Got)
			if c.Right() {
				right[c.Judge]++
			} else {
				mark = "NO"
			}
			if c.Err != "" {
				said = "no verdict"
			}
			rows = append(rows, []string{c.Judge, c.Control, c.Evidence, word(c.Want), said, mark})
		}
		var got []string
		for _, j := range judges {
			got = append(got, fmt.Sprintf("%s %d of %d right", j, right[j], all[j]))
		}
		table(fmt.Sprintf("Judge controls (%s): %s", r.Run.ID, strings.Join(got, "; ")),
			[]string{"judge", "control", "evidence", "known", "judge said", "right"}, rows)
	}
}

// writeTrust renders the judges' agreement: a table per run, then the
// episodes on which a judge and a reference disagree.
func writeTrust(rs []*Report, table func(string, []string, [][]string)) {
	for _, r := range rs {
		if len(r.Judges) == 0 {
			continue
		}
		stat := func(s agreement.Stats) []string {
			if s.N == 0 {
				return []string{"0", "-", "-", "-"}
			}
			return []string{fmt.Sprint(s.N), fmt.Sprintf("%.1f%%", 100*s.Agreement), s.KappaString(), s.Matrix()}
		}
		var rows [][]string
		for _, j := range r.Judges {
			add := func(evidence, ref string, s agreement.Stats) {
				rows = append(rows, append([]string{j.Judge, evidence, ref}, stat(s)...))
			}
			add("all", "human", j.VsHuman)
			add("all", "rules", j.VsRules)
			for _, e := range j.ByEvidence {
				add(e.Evidence, "human", e.VsHuman)
				add(e.Evidence, "rules", e.VsRules)
			}
		}
		table(fmt.Sprintf("Judges against people and rules (%s)", r.Run.ID),
			[]string{"judge", "evidence", "against", "n", "agreement", "kappa", "confusion (judge/reference)"}, rows)
		var urows [][]string
		for _, j := range r.Judges {
			urows = append(urows, []string{j.Judge, fmt.Sprint(j.Episodes), fmt.Sprint(j.Undecided),
				fmt.Sprintf("%d / %d", j.Usage.InputTokens, j.Usage.OutputTokens), fmt.Sprintf("$%.4f", j.Usage.Cost)})
		}
		table(fmt.Sprintf("Judges' spending (%s), apart from the agent's", r.Run.ID),
			[]string{"judge", "episodes", "undecided", "tokens (in/out)", "cost"}, urows)
		var drows [][]string
		for _, j := range r.Judges {
			for _, ref := range []struct {
				name string
				s    agreement.Stats
			}{{"human", j.VsHuman}, {"rules", j.VsRules}} {
				for _, d := range ref.s.Disagree {
					drows = append(drows, []string{j.Judge, ref.name, d.Task, fmt.Sprint(d.Repeat), word(d.A), word(d.B)})
				}
			}
		}
		if len(drows) > 0 {
			table(fmt.Sprintf("Disagreements (%s): %d", r.Run.ID, len(drows)), []string{"judge", "against", "task", "repeat", "judge said", "reference said"}, drows)
		}
	}
}

func word(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}
