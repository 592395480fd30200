package vnc

// For the tests of package vnc_test, which reach the desktop through the
// provider table (a package that imports this one).
var (
	Serve = serve
	Need  = need
)
