package judge

import (
	"crypto/sha256"
	"encoding/hex"
)

// PromptHash fingerprints the judge's prompt: its version and both forms
// of its system prompt (with and without criteria). A run's receipt
// records it, so that a new wording is told apart.
func PromptHash() string {
	h := sha256.New()
	for _, s := range []string{PromptVersion, systemPrompt(false), systemPrompt(true)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
