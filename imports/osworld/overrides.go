package osworld

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/task"
)

// overrideFiles are the solutions written for OSWorld's tasks, kept
// beside the importer rather than in the suites it writes: one file per
// task, named by its id, holding gold and wrong trajectories. An import
// gives each task its override's trajectories, so that validate proves
// the task as it proves Proctor's own.
//
//go:embed overrides/*.yaml
var overrideFiles embed.FS

// Override is the solution written for one imported task.
type Override struct {
	Gold  []action.Action   `json:"gold"`
	Wrong []task.Trajectory `json:"wrong,omitempty"`
}

// Overrides reads the overrides by task id; a file that does not read is
// an error naming it.
var Overrides = sync.OnceValues(func() (map[string]Override, error) {
	names, err := overrideFiles.ReadDir("overrides")
	if err != nil {
		return nil, err
	}
	out := map[string]Override{}
	for _, n := range names {
		b, err := overrideFiles.ReadFile(path.Join("overrides", n.Name()))
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(b)
		if err != nil {
			return nil, fmt.Errorf("overrides/%s: %v", n.Name(), err)
		}
		var o Override
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			return nil, fmt.Errorf("overrides/%s: %v", n.Name(), err)
		}
		if len(o.Gold) == 0 {
			return nil, fmt.Errorf("overrides/%s: no gold", n.Name())
		}
		out[strings.TrimSuffix(n.Name(), ".yaml")] = o
	}
	return out, nil
})

// applyOverride gives a feasible task the trajectories written for it.
func applyOverride(t *task.Task) error {
	ovs, err := Overrides()
	if err != nil {
		return err
	}
	o, ok := ovs[t.ID]
	if !ok || t.Kind == task.InfeasibleTask {
		return nil
	}
	t.Gold, t.Wrong, t.Unproven = o.Gold, o.Wrong, ""
	return nil
}
