package judge_test

import (
	"strings"
	"testing"

	. "github.com/proctor-eval/proctor/judge"
)

func TestLoopback(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:8760/v1", true},
		{"http://127.3.4.5/v1", true},
		{"http://localhost:8760/v1", true},
		{"http://LOCALHOST/v1", true},
		{"http://[::1]:8760/v1", true},
		{"", false},
		{"https://api.openai.com/v1", false},
		{"http://10.0.0.5:8760/v1", false},
		{"http://localhost.example.com/v1", false},
		{"http://127.0.0.1.example.com/v1", false},
		{"127.0.0.1:8760", false},
		{"://bad", false},
	} {
		if got := Loopback(tc.url); got != tc.want {
			t.Errorf("Loopback(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// TestNewKeyOnLoopback: a judge on this machine needs no key; any other
// still does.
func TestNewKeyOnLoopback(t *testing.T) {
	t.Setenv("JUDGE_EMPTY_KEY", "")
	for _, tc := range []struct {
		cfg  Config
		want string // "": no error
	}{
		{Config{Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY", BaseURL: "http://127.0.0.1:8760/v1"}, ""},
		{Config{Model: "m", APIKeyEnv: "JUDGE_UNSET_KEY_FOR_TEST", BaseURL: "http://localhost:8760/v1"}, ""},
		{Config{Provider: Anthropic, Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY", BaseURL: "http://[::1]:8760"}, ""},
		{Config{Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY", BaseURL: "http://10.0.0.5:8760/v1"}, "$JUDGE_EMPTY_KEY is empty"},
		{Config{Model: "m", APIKeyEnv: "JUDGE_EMPTY_KEY"}, "$JUDGE_EMPTY_KEY is empty"},
	} {
		_, err := New(tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
