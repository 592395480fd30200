package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/store"
)

// AmbiguousTarget is a step of a trajectory whose role and name target
// matched more than one showing element, none preferred (no modal or
// active window held just one), so that the first was taken: the author
// should narrow it with app, window, text or nth.
type AmbiguousTarget struct {
	Task       string
	Trajectory string
	Step       int // the turn, from 1
	Action     string
	Matches    int
}

func (a AmbiguousTarget) String() string {
	return fmt.Sprintf("%s [%s] step %d: %s matched %d showing elements and the first was taken; narrow it with app, window, text or nth",
		a.Task, a.Trajectory, a.Step, a.Action, a.Matches)
}

// Ambiguous lists the ambiguous targets of every replayed trajectory in
// the store, from what the environment recorded of each action.
func Ambiguous(st *store.Store) ([]AmbiguousTarget, error) {
	results, err := st.Results()
	if err != nil {
		return nil, err
	}
	var out []AmbiguousTarget
	for _, r := range results {
		steps, err := st.Turns(r.Task, r.Repeat)
		if err != nil {
			return nil, err
		}
		id, traj := r.Task, ""
		if i := strings.LastIndex(id, " ["); i >= 0 && strings.HasSuffix(id, "]") {
			id, traj = id[:i], id[i+2:len(id)-1]
		}
		for _, s := range steps {
			var done []action.Step
			if json.Unmarshal(s.Done, &done) != nil {
				continue
			}
			for _, d := range done {
				if d.Ambiguous > 1 {
					out = append(out, AmbiguousTarget{Task: id, Trajectory: traj, Step: s.Index, Action: d.Action.String(), Matches: d.Ambiguous})
				}
			}
		}
	}
	return out, nil
}
