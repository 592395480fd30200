package devtools

// Error is an exception the page's JavaScript threw.
type Error string

func (e Error) Error() string { return string(e) }
