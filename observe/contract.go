package observe

import (
	"fmt"
	"strings"

	"github.com/proctor-eval/proctor/action"
)

// What an environment answers besides screenshots and trees: the types of
// the environment contract that the checks read too. They live here, in
// the data model, so that package env (which implements the contract) and
// package check (which reads it) share them without importing each other.

// Error is a sentinel error of the environment contract.
type Error string

func (e Error) Error() string { return string(e) }

// ErrNotFound means no element, window or file matches: the one not-found
// sentinel of every environment and of the checks.
const ErrNotFound Error = "not found"

// CommandResult is the outcome of a command run in the environment.
type CommandResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exit_code"`
}

// Element is an accessibility node found by a query.
type Element struct {
	App    string     `json:"app,omitempty"`
	Role   string     `json:"role"`
	Name   string     `json:"name"`
	Text   string     `json:"text,omitempty"`
	Box    action.Box `json:"box"`
	States []string   `json:"states,omitempty"`
}

// ElementQuery selects accessibility nodes. Empty fields match anything;
// Name and Text match exactly unless Contains is set (names without the
// spaces around them, as SameName compares).
type ElementQuery struct {
	Role     string `json:"role,omitempty" yaml:"role,omitempty"`
	Name     string `json:"name,omitempty" yaml:"name,omitempty"`
	Text     string `json:"text,omitempty" yaml:"text,omitempty"`
	App      string `json:"app,omitempty" yaml:"app,omitempty"`
	Contains bool   `json:"contains,omitempty" yaml:"contains,omitempty"`
}

// Matches reports whether e satisfies the query.
func (q ElementQuery) Matches(e Element) bool {
	eq := func(want, got string) bool {
		if want == "" {
			return true
		}
		if q.Contains {
			return strings.Contains(strings.ToLower(got), strings.ToLower(want))
		}
		return got == want
	}
	name := eq(q.Name, e.Name) || !q.Contains && SameName(q.Name, e.Name)
	return (q.App == "" || strings.EqualFold(q.App, e.App)) && (q.Role == "" || strings.EqualFold(q.Role, e.Role)) && name && eq(q.Text, e.Text)
}

// Describe renders the query for messages: push button "Save" in kcalc.
func (q ElementQuery) Describe() string {
	var parts []string
	if q.Role != "" {
		parts = append(parts, q.Role)
	}
	if q.Name != "" {
		parts = append(parts, fmt.Sprintf("%q", q.Name))
	}
	if q.Text != "" {
		parts = append(parts, fmt.Sprintf("with text %q", q.Text))
	}
	if q.App != "" {
		parts = append(parts, "in "+q.App)
	}
	if len(parts) == 0 {
		return "(any)"
	}
	return strings.Join(parts, " ")
}
