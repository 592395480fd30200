package observe

// Tab is one of a browser's tabs as an observation shows it: browser
// agents are told the open tabs and each one's address, as a browser's tab
// strip and address bar show them.
type Tab struct {
	Title  string `json:"title"`
	URL    string `json:"url"`
	Active bool   `json:"active,omitempty"`
}
