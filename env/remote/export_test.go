package remote

import "testing"

// SetAPIVersion makes the clients dialled below speak version v, until the
// test ends.
func SetAPIVersion(t *testing.T, v string) {
	old := apiVersion
	apiVersion = v
	t.Cleanup(func() { apiVersion = old })
}
