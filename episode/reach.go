package episode

import (
	"slices"

	"github.com/proctor-eval/proctor/service"
	"github.com/proctor-eval/proctor/task"
)

// Reach is what a browser's pages may reach in an episode of t besides
// the pages its setup opens: the run's origins (cfg.Origins, the static
// services'), those of the suite's command services (svc, may be nil)
// and those the task and suite allow, and whether the web is open to
// them.
func Reach(cfg Config, t *task.Task, svc *service.Instances) (origins []string, web bool) {
	origins, web = task.Reach(cfg.Suite, t)
	origins = append(origins, cfg.Origins...)
	for _, o := range svc.Origins() {
		origins = append(origins, o)
	}
	slices.Sort(origins)
	return slices.Compact(origins), web
}
