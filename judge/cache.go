package judge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/proctor-eval/proctor/judgment"
)

// Cache keeps verdicts by key (see Key). Get reports a miss for anything
// it cannot read back; Put's error is returned by Client.Judge.
type Cache interface {
	Get(key string) (judgment.Verdict, bool)
	Put(key string, v judgment.Verdict) error
}

// Key is the cache key of a request to a provider's model: the SHA-256,
// in hex, of the provider, the model, the prompt (its version and text),
// the expectation, the criteria (id, weight, text) and every evidence part
// (label, and the text or the image's format and SHA-256), each field
// length-prefixed so that no two requests share a key by concatenation.
// The request is normalized first, as Client.Judge does (a criterion
// weight of 0 is 1, "jpg" is "jpeg", a missing image format is sniffed).
func Key(provider, model string, req judgment.Request) string {
	if n, err := normalize(req); err == nil {
		req = n
	}
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field("proctor judge cache key")
	field(provider)
	field(model)
	field(PromptVersion)
	field(systemPrompt(len(req.Criteria) > 0))
	field(req.Expectation)
	field(fmt.Sprint(len(req.Criteria)))
	for _, c := range req.Criteria {
		field(c.ID)
		field(fmt.Sprint(math.Float64bits(c.Weight)))
		field(c.Text)
	}
	field(fmt.Sprint(len(req.Evidence)))
	for _, p := range req.Evidence {
		field(p.Label)
		if p.IsImage() {
			field("image")
			field(p.Format)
			field(sum(sha256.New(), p.Image))
		} else {
			field("text")
			field(p.Text)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sum(h hash.Hash, b []byte) string {
	h.Write(b)
	return string(h.Sum(nil))
}

// DirCache is a Cache in a directory: one JSON file per key, named
// KEY.json, written atomically (a temporary file renamed into place). The
// directory is made on the first Put.
type DirCache string

func (d DirCache) path(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return "", fmt.Errorf("judge cache: bad key %q", key)
	}
	return filepath.Join(string(d), key+".json"), nil
}

// Get reads the verdict stored at key; a missing or unreadable file is a
// miss.
func (d DirCache) Get(key string) (judgment.Verdict, bool) {
	p, err := d.path(key)
	if err != nil {
		return judgment.Verdict{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return judgment.Verdict{}, false
	}
	var v judgment.Verdict
	if err := json.Unmarshal(b, &v); err != nil || v.Reason == "" {
		return judgment.Verdict{}, false
	}
	return v, true
}

// Put stores v at key.
func (d DirCache) Put(key string, v judgment.Verdict) (err error) {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if string(d) == "" {
		return errors.New("judge cache: no directory")
	}
	v.Cached = false
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(string(d), ".tmp-"+key+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if _, err = f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}
