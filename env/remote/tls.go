package remote

import (
	"crypto/sha256"
	"encoding/hex"
)

// Fingerprint returns the SHA-256 of a DER certificate in lowercase hex:
// what a Target pins.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}
