package validate

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/store"
)

// SettleCost is what waiting for the screen to settle after each turn
// cost a run: the environment records the wait on a turn's last step
// (action.Step.Settle).
type SettleCost struct {
	Turns            int // turns that performed actions
	Waited           int // those with a wait recorded
	Median, P90, Max time.Duration
	Total            time.Duration
}

// String is the summary's line, such as "settle per turn: median 310ms,
// p90 1.05s, max 2.01s, total 1m32s over 240 turns".
func (c SettleCost) String() string {
	if c.Waited == 0 {
		return "settle per turn: none recorded over " + english.Count(c.Turns, "turn")
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("settle per turn: median %s, p90 %s, max %s, total %s over %s",
		r(c.Median), r(c.P90), r(c.Max), c.Total.Round(100*time.Millisecond), english.Count(c.Turns, "turn"))
}

// Settling reads the settle waits of every episode in the store. A turn
// that performed actions but recorded no wait (settling off, or an
// environment that does not settle) counts as waiting nothing.
func Settling(st *store.Store) (SettleCost, error) {
	results, err := st.Results()
	if err != nil {
		return SettleCost{}, err
	}
	var waits []time.Duration
	var c SettleCost
	for _, r := range results {
		steps, err := st.Turns(r.Task, r.Repeat)
		if err != nil {
			return SettleCost{}, err
		}
		for _, s := range steps {
			var done []action.Step
			if len(s.Done) == 0 || json.Unmarshal(s.Done, &done) != nil || len(done) == 0 {
				continue
			}
			w := done[len(done)-1].Settle
			waits = append(waits, w)
			if w > 0 {
				c.Waited++
			}
		}
	}
	return costOf(waits, c), nil
}

func costOf(waits []time.Duration, c SettleCost) SettleCost {
	c.Turns = len(waits)
	if len(waits) == 0 {
		return c
	}
	slices.Sort(waits)
	for _, w := range waits {
		c.Total += w
	}
	c.Median = quantile(waits, 0.5)
	c.P90 = quantile(waits, 0.9)
	c.Max = waits[len(waits)-1]
	return c
}

// quantile is the nearest-rank quantile q of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted))-1e-9)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
