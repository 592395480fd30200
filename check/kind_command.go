package check

import (
	"context"
	"regexp"
	"strings"
)

// CommandKind: a command run in the environment exits with exit_code,
// prints stdout, or prints something matching stdout_regex.
const CommandKind Kind = "command"

func init() {
	register(CommandKind, kindDef{
		fields:   []string{"command", "timeout", "exit_code", "stdout", "stdout_regex"},
		compile:  compileCommand,
		evaluate: evalCommand,
	})
}

func compileCommand(c *Check) error {
	s := c.Spec
	if s.Command == "" {
		return ferr("command", "a command check needs a command")
	}
	if s.ExitCode == nil && s.Stdout == nil && s.StdoutRE == "" {
		return ferr("exit_code", "a command check needs exit_code, stdout or stdout_regex")
	}
	if s.StdoutRE != "" {
		re, err := regexp.Compile(s.StdoutRE)
		if err != nil {
			return ferr("stdout_regex", "bad regular expression: %v", err)
		}
		c.re = re
	}
	return nil
}

func evalCommand(ctx context.Context, c *Check, in input) (bool, string, error) {
	s := c.Spec
	res, err := in.ev.Command(ctx, s.Command, c.timeout())
	if err != nil {
		return false, "", infraError{err}
	}
	if s.ExitCode != nil && res.ExitCode != *s.ExitCode {
		return failf("`%s` exited %d, want %d (stderr %s)", s.Command, res.ExitCode, *s.ExitCode, quote(res.Stderr))
	}
	if s.Stdout != nil && strings.TrimRight(res.Stdout, "\n") != strings.TrimRight(*s.Stdout, "\n") {
		return failf("`%s` printed %s, want %s", s.Command, quote(res.Stdout), quote(*s.Stdout))
	}
	if c.re != nil && !c.re.MatchString(res.Stdout) {
		return failf("`%s` printed %s, which does not match /%s/", s.Command, quote(res.Stdout), s.StdoutRE)
	}
	return pass("`%s` exited %d with the expected output", s.Command, res.ExitCode)
}
