package task

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/proctor-eval/proctor/internal/suggest"
)

// rawSchemas are the schemas' documents by $id, to read the fields an
// object may hold.
var rawSchemas = sync.OnceValue(func() map[string]any {
	out := map[string]any{}
	for id, b := range map[string][]byte{SchemaURL: Schema, SuiteSchemaURL: SuiteSchema} {
		var doc any
		if json.Unmarshal(b, &doc) == nil {
			out[id] = doc
		}
	}
	return out
})

// knownFields lists the properties of the object schema at schemaURL
// ("https://proctor.dev/schema/task.json#/$defs/target"), where a
// validation error of an unknown field stands.
func knownFields(schemaURL string) []string {
	base, frag, _ := strings.Cut(schemaURL, "#")
	node := rawSchemas()[base]
	for _, p := range strings.Split(strings.TrimSuffix(frag, "/additionalProperties"), "/") {
		if p == "" {
			continue
		}
		p = strings.NewReplacer("~1", "/", "~0", "~").Replace(p)
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	obj, _ := node.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// nearField is `; did you mean "X"?` for the field of the object schema
// at schemaURL nearest the unknown name, or "".
func nearField(schemaURL, name string) string {
	return suggest.DidYouMean(name, knownFields(schemaURL))
}
