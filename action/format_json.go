package action

import (
	"bytes"
	"encoding/json"
)

// ParseJSON parses Proctor's own actions: an Action object or an array of
// them, with unknown fields rejected.
func ParseJSON(reply string, o Options) ([]Action, error) {
	return parseObjects(FormatJSON, reply, func(j *jobj) ([]Action, error) {
		b, _ := json.Marshal(j.m)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var a Action
		if err := dec.Decode(&a); err != nil {
			return nil, err
		}
		return []Action{a}, nil
	})
}
