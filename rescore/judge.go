package rescore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/proctor-eval/proctor/check"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/proctor-eval/proctor/usage"
)

// Screened is a stored episode's evidence: what its checks read, with
// the screens the run kept (each step's screenshot and the final screen),
// which judge checks look at.
type Screened struct {
	*check.Recorded
	st    *store.Store
	final string         // the final screen's file in the store
	shots map[int]string // each step's screenshot
}

var _ check.Screens = (*Screened)(nil)

// Stored reads the evidence of an episode of st; store.ErrNoEvidence
// when the run kept none.
func Stored(st *store.Store, r store.Result) (*Screened, error) {
	rec, err := st.Evidence(r.Task, r.Repeat)
	if err != nil {
		return nil, err
	}
	steps, err := st.Turns(r.Task, r.Repeat)
	if err != nil {
		return nil, err
	}
	ev := &Screened{Recorded: rec, st: st, final: r.FinalShot, shots: map[int]string{}}
	for _, s := range steps {
		ev.shots[s.Index] = s.Shot
	}
	return ev, nil
}

// FinalScreen reads the screen kept after the episode.
func (e *Screened) FinalScreen(context.Context) (check.Screen, error) {
	if e.final == "" {
		return check.Screen{}, errors.New("the run kept no final screen of this episode (runs made before final screens were kept)")
	}
	return store.StepScreen(e.st, e.final)
}

// StepScreen reads the screenshot of step turn.
func (e *Screened) StepScreen(_ context.Context, turn int) (check.Screen, error) {
	return store.StepScreen(e.st, e.shots[turn])
}

// JudgeSummary is what a re-judging by a judge did.
type JudgeSummary struct {
	Judge     string `json:"judge"`
	Episodes  int    `json:"episodes"` // judged
	Passed    int    `json:"passed"`   // every judge check passed
	Undecided int    `json:"undecided"`
	Checks    int    `json:"checks"` // judge checks decided
	Asked     int    `json:"asked"`  // of them, by asking the model
	Cached    int    `json:"cached"` // of them, from the cache
	// Retried counts the episodes judged that the run recorded as errors
	// because its judge gave no verdict (see Undecided).
	Retried int `json:"retried,omitempty"`
	// Decided counts those of them whose outcome in the run's results
	// the judging replaced (every check decided).
	Decided int         `json:"decided,omitempty"`
	Usage   usage.Usage `json:"usage"`
	// Errors are the undecided episodes' reasons.
	Errors []string `json:"errors,omitempty"`
}

// Judge decides the judge checks of every episode of the run in st again
// with jm, from the stored evidence and with the checks of the suite s,
// and keeps the verdicts as jm's judgement of each episode, beside the
// run's own and other judges'. Episodes without evidence, tasks with no
// judge check and error episodes are left alone, but for the errors of a
// judge that gave no verdict in the run (Undecided): their evidence was
// kept, and they are judged. Each episode gets timeout
// (0: two minutes). A judge that gives no verdict leaves the episode
// undecided, with the reason; the others go on. Progress, a line per
// episode, goes to progress when it is not nil.
func Judge(ctx context.Context, st *store.Store, s *task.Suite, jm judgment.Model, timeout time.Duration, progress io.Writer) (*JudgeSummary, error) {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	results, err := st.Results()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", st.Dir, err)
	}
	sum := &JudgeSummary{Judge: jm.Name()}
	compiled := map[string][]*check.Check{}
	for _, r := range results {
		cs, seen := compiled[r.Task]
		if !seen {
			if t, ok := s.Task(r.Task); ok {
				if all, err := check.CompileAll(t.Checks, t.Milestones); err == nil {
					cs = all.JudgeChecks()
				}
			}
			compiled[r.Task] = cs
		}
		if len(cs) == 0 {
			continue
		}
		wasUndecided := false
		if check.Outcome(r.Outcome) == check.Error {
			if !Undecided(r) {
				continue
			}
			wasUndecided = true
		}
		ev, err := Stored(st, r)
		if errors.Is(err, store.ErrNoEvidence) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ev.AssetDir = s.AssetPath("")
		jg := store.Judgement{Task: r.Task, Repeat: r.Repeat, Judge: jm.Name(), At: time.Now(), Source: store.JudgedLater}
		ectx, cancel := context.WithTimeout(ctx, timeout)
		var decided *check.Verdict // the whole verdict of an episode the run left undecided
		if wasUndecided {
			// Every check is evaluated again, the judge's with jm, so
			// that a decision replaces the run's error in its results.
			v, err := redecide(ectx, s, r, ev, jm)
			if err != nil {
				cancel()
				return nil, err
			}
			for _, res := range store.JudgeResults(v) {
				if res.Err != "" {
					if jg.Err == "" {
						jg.Err = res.Err
					}
					continue
				}
				jg.Checks = append(jg.Checks, res)
			}
			if jg.Err != "" {
				jg.Checks = nil
			} else {
				decided = &v
			}
		} else {
			for _, c := range cs {
				res := c.EvaluateWith(ectx, ev, nil, jm)
				if res.Err != "" {
					jg.Err = res.Err
					break
				}
				jg.Checks = append(jg.Checks, res)
			}
		}
		cancel()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, res := range jg.Checks {
			sum.Checks++
			if res.Judge.Cached {
				sum.Cached++
			} else {
				sum.Asked++
			}
			sum.Usage = sum.Usage.Add(res.Judge.Usage)
		}
		if err := st.SaveJudgement(jg); err != nil {
			return nil, fmt.Errorf("%s: save the judgement of %s #%d: %w", st.Dir, r.Task, r.Repeat, err)
		}
		if decided != nil {
			// The run's results now hold the decision, said to be a
			// later judge's; the run's error reason is replaced.
			decided.Reason = fmt.Sprintf("%s (decided after the run by judge %s)", decided.Reason, jm.Name())
			vb, err := json.Marshal(decided)
			if err != nil {
				return nil, err
			}
			r.Outcome, r.Reason, r.Milestone, r.Verdict = string(decided.Outcome), decided.Reason, decided.MilestoneScore, vb
			r.JudgeInputTokens += decided.JudgeUsage.InputTokens
			r.JudgeOutputTokens += decided.JudgeUsage.OutputTokens
			r.JudgeCost += decided.JudgeUsage.Cost
			r.End = ""
			if err := st.SaveResult(r); err != nil {
				return nil, fmt.Errorf("%s: save the result of %s #%d: %w", st.Dir, r.Task, r.Repeat, err)
			}
			sum.Decided++
		}
		sum.Episodes++
		if wasUndecided {
			sum.Retried++
		}
		word := "undecided: " + jg.Err
		switch pass, decided := jg.Pass(); {
		case !decided:
			sum.Undecided++
			sum.Errors = append(sum.Errors, fmt.Sprintf("%s #%d: %s", r.Task, r.Repeat, jg.Err))
		case pass:
			sum.Passed++
			word = "pass"
		default:
			word = "fail"
		}
		if progress != nil {
			fmt.Fprintf(progress, "%s #%d: %s\n", r.Task, r.Repeat, oneLine(word))
		}
	}
	return sum, nil
}

// redecide evaluates every check of the task of r again on its stored
// evidence, the judge checks with jm, as the run would have had its judge
// answered: the episode's end is the one the run recorded (Result.End).
func redecide(ctx context.Context, s *task.Suite, r store.Result, ev *Screened, jm judgment.Model) (check.Verdict, error) {
	t, ok := s.Task(r.Task)
	if !ok {
		return check.Verdict{}, fmt.Errorf("task %s is no longer in the suite", r.Task)
	}
	all, err := check.CompileAll(t.Checks, t.Milestones)
	if err != nil {
		return check.Verdict{}, fmt.Errorf("task %s: %w", r.Task, err)
	}
	all.Judge = jm
	end := check.End(r.End)
	if end == "" { // a run from before Result.End
		if end = End(ev.Recorded, check.Error); end == check.EndError {
			end = check.EndBudget
		}
	}
	return all.Evaluate(ctx, ev, end), nil
}

// Undecided reports whether r is an episode that the run recorded as an
// infrastructure error only because its judge gave no verdict
// (check.UndecidedJudge): the runner kept its evidence, and proctor judge
// can decide it without running the agent again.
func Undecided(r store.Result) bool {
	if check.Outcome(r.Outcome) != check.Error || len(r.Verdict) == 0 {
		return false
	}
	var v check.Verdict
	if json.Unmarshal(r.Verdict, &v) != nil {
		return false
	}
	_, ok := check.UndecidedJudge(v)
	return ok
}

// Write prints the totals of a re-judging.
func (s *JudgeSummary) Write(w io.Writer) {
	fmt.Fprintf(w, "judge %s: %s judged, %d passed, %d failed, %d undecided\n", s.Judge, episodes(s.Episodes),
		s.Passed, s.Episodes-s.Passed-s.Undecided, s.Undecided)
	fmt.Fprintf(w, "%s decided: %d by asking the model, %d from the cache; %d input and %d output tokens, $%.4f\n",
		english.Count(s.Checks, "judge check"), s.Asked, s.Cached, s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.Cost)
	if s.Retried > 0 {
		fmt.Fprintf(w, "%s left undecided by the run's judge (an error in the run's results) judged now; %d decided, their outcome in the run's results replaced\n", episodes(s.Retried), s.Decided)
	}
	for _, e := range s.Errors {
		fmt.Fprintln(w, "undecided: "+strings.TrimSpace(e))
	}
}
