package check

import (
	"context"
	"fmt"

	"github.com/proctor-eval/proctor/internal/english"
	"github.com/proctor-eval/proctor/judgment"
)

// Kind names a check.
type Kind string

// Kinds lists every check kind. Each kind's constant, fields, compile and
// evaluate live in its own kind_*.go file and register themselves in
// kinds; this list only fixes the order in which kinds are reported (the
// "known:" list of Compile's error), which task files and tests see, so it
// is written out rather than taken from the map. TestKindRegistry keeps
// the two, and task/schema.json, in step.
var Kinds = []Kind{Exact, Lines, AnswerKind, Contains, NotContains, Exists, NotExists, Range,
	Infeasible, FileEqual, DocumentEqual, CommandKind, Predicate, Process, Milestones, JudgeKind, SideEffects, AnyOf}

// kindDef is everything that is particular to one check kind. Compile and
// Evaluate do what all kinds share (unknown kinds, stray fields, the probe,
// infrastructure errors) and hand the rest to the kind's definition.
type kindDef struct {
	// fields are the Spec fields, by their task-file names, that apply
	// besides kind and name. Compile rejects a spec that sets any other,
	// so lint can say "expected: does not apply to a range check".
	fields []string
	// probe says how Evaluate reads the spec's probe, when the kind takes
	// one, before it calls evaluate.
	probe probeUse
	// compile checks what the kind requires of the spec, beyond fields,
	// and prepares c (regular expressions, programs). Errors are
	// *FieldError values. Nil when fields say all there is to say.
	compile func(c *Check) error
	// evaluate judges the evidence. An infraError means the evidence could
	// not be read; any other error is a fault of the check itself.
	evaluate func(ctx context.Context, c *Check, in input) (pass bool, reason string, err error)
}

// probeUse says how Evaluate treats a spec's probe.
type probeUse int

const (
	// probeFound reads the probe into input.val; when there is nothing to
	// read (a missing file, no element, a failing command) the check fails
	// without calling evaluate.
	probeFound probeUse = iota
	// probeMayMiss reads the probe but calls evaluate even when there is
	// nothing to read, with an empty value: not_contains holds of a file
	// that is not there.
	probeMayMiss
	// probeByKind leaves the probe to evaluate: answer's probe replaces the
	// agent's answer, and a missing one means no answer.
	probeByKind
)

// input is what a kind's evaluate reads besides the check itself. It is a
// struct so that a kind needing more (a judge model, say) adds a field
// here rather than a parameter to every kind.
type input struct {
	ev  Evidence
	ms  MilestoneScores // for milestones checks; nil otherwise
	val string          // the probe's value, read as the kind's probeUse says
	// judge decides judge checks; nil where none is configured.
	judge judgment.Model
	// res is the result being made, for a kind that adds to it (a
	// judge's details); nil when the caller keeps no result.
	res *Result
}

// kinds is the registry of check kinds, filled by the init functions of the
// kind_*.go files.
var kinds = map[Kind]kindDef{}

// register adds a kind at init. A kind registered twice is a programming
// error that every test would trip over, so it panics.
func register(k Kind, def kindDef) {
	if _, dup := kinds[k]; dup {
		panic(fmt.Sprintf("check kind %q registered twice", k))
	}
	if def.evaluate == nil {
		panic(fmt.Sprintf("check kind %q has no evaluate", k))
	}
	kinds[k] = def
}

// needProbe is the compile step of the kinds that read a probe, which the
// spec must then give.
func needProbe(c *Check) error {
	if c.Spec.Probe == nil {
		return ferr("probe", "%s check needs a probe", english.A(string(c.Spec.Kind)))
	}
	return nil
}
