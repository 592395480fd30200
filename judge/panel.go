package judge

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/proctor-eval/proctor/judgment"
)

// Panel asks several judges and takes the majority.
type Panel struct {
	Judges []*Client
}

// Name is the judges' names joined by "+".
func (p Panel) Name() string {
	names := make([]string, len(p.Judges))
	for i, j := range p.Judges {
		if j != nil {
			names[i] = j.Name()
		}
	}
	return strings.Join(names, "+")
}

// Judge asks every judge at once and returns the panel's verdict, with the
// individual ones in its Votes, in the judges' order. The panel passes when more than
// half of the judges pass; a tie fails (the Reason says so). Its Score is
// the judges' mean score, its Usage their sum, its Model their models
// joined by ", ", Cached is set when every verdict came from a cache, and
// it has no Criteria (see the individual verdicts). Any judge's error is
// the panel's error, with no verdict: the first to happen is returned and
// the other asks are cancelled.
func (p Panel) Judge(ctx context.Context, req judgment.Request) (judgment.Verdict, error) {
	n := len(p.Judges)
	if n == 0 {
		return judgment.Verdict{}, fmt.Errorf("%w: a panel with no judges", ErrInvalid)
	}
	for i, j := range p.Judges {
		if j == nil {
			return judgment.Verdict{}, fmt.Errorf("%w: judge %d of the panel is nil", ErrInvalid, i+1)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	verdicts := make([]judgment.Verdict, n)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i, j := range p.Judges {
		wg.Go(func() {
			v, err := j.Judge(ctx, req)
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("judge %d of %d (%s %s): %w", i+1, n, j.cfg.Provider, j.cfg.Model, err)
					cancel()
				}
				mu.Unlock()
				return
			}
			verdicts[i] = v
		})
	}
	wg.Wait()
	if first != nil {
		return judgment.Verdict{}, first
	}
	return majority(verdicts), nil
}

// majority combines the verdicts of a panel.
func majority(vs []judgment.Verdict) judgment.Verdict {
	var out judgment.Verdict
	passes := 0
	models := make([]string, len(vs))
	lines := make([]string, len(vs))
	out.Cached = true
	for i, v := range vs {
		word := "fail"
		if v.Pass {
			passes++
			word = "pass"
		}
		out.Score += v.Score / float64(len(vs))
		out.Usage = out.Usage.Add(v.Usage)
		out.Cached = out.Cached && v.Cached
		models[i] = v.Model
		lines[i] = fmt.Sprintf("judge %d (%s): %s: %s", i+1, v.Model, word, v.Reason)
	}
	out.Pass = 2*passes > len(vs)
	out.Model = strings.Join(models, ", ")
	var head string
	switch {
	case 2*passes == len(vs):
		head = fmt.Sprintf("tie: %d of %d judges passed, and a tie fails", passes, len(vs))
	case out.Pass:
		head = fmt.Sprintf("pass by majority: %d of %d judges passed", passes, len(vs))
	default:
		head = fmt.Sprintf("fail by majority: %d of %d judges passed", passes, len(vs))
	}
	out.Reason = head + "\n" + strings.Join(lines, "\n")
	out.Votes = vs
	return out
}
