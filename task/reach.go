package task

import (
	"net/url"
	"slices"
	"strings"
)

// NetworkWeb is the network that opens the public web to a browser's
// pages.
const NetworkWeb = "web"

// Reach is what a browser's pages may reach in the task beyond its own
// pages and its suite's services: the origins the task and its suite
// (which may be nil) allow, and whether either opens the web.
func Reach(s *Suite, t *Task) (origins []string, web bool) {
	origins = slices.Clone(t.Environment.Allow)
	web = t.Environment.Network == NetworkWeb
	if s != nil {
		origins = append(origins, s.Allow...)
		web = web || s.Network == NetworkWeb
	}
	return origins, web
}

// OriginProblem says what is wrong with an origin of allow, or "".
func OriginProblem(o string) string {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss":
		return "an origin is http, https, ws or wss://HOST[:PORT]"
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "":
		return "an origin is scheme://HOST[:PORT], with no user, path, query or fragment"
	}
	return ""
}
