package check

import (
	"encoding/json"
	"slices"

	"github.com/proctor-eval/proctor/query"
)

// queryKey identifies a query among recorded answers.
func queryKey(q query.Service) string {
	b, _ := json.Marshal(q)
	return string(b)
}

// ServiceAnswer is a recorded service probe.
type ServiceAnswer struct {
	Query query.Service `json:"query"`
	Value string        `json:"value,omitempty"`
	Found bool          `json:"found,omitempty"`
}

// findService returns the recorded answer to q.
func findService(as []ServiceAnswer, q query.Service) (ServiceAnswer, bool) {
	k := queryKey(q)
	i := slices.IndexFunc(as, func(a ServiceAnswer) bool { return queryKey(a.Query) == k })
	if i < 0 {
		return ServiceAnswer{}, false
	}
	return as[i], true
}
