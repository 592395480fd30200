package run

import "strings"

// staticOrigins are the origins of the suite's static services, which a
// browser's pages may reach in every episode: each also as
// http://localhost:PORT, which it answers too.
func (cfg Config) staticOrigins() []string {
	var out []string
	for _, o := range cfg.static {
		out = append(out, o, strings.Replace(o, "://127.0.0.1:", "://localhost:", 1))
	}
	return out
}
