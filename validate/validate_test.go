package validate

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteCutsReasonsUnlessVerbose(t *testing.T) {
	long := "checks[0]: value " + strings.Repeat("x", 200) + " is not the expected one"
	rows := []Row{{Task: "t", Trajectory: "gold", Want: "success", Got: "failure", Reason: long}}
	var short, whole bytes.Buffer
	Write(&short, rows)
	WriteVerbose(&whole, rows)
	if strings.Contains(short.String(), "expected one") || !strings.Contains(short.String(), "…") {
		t.Errorf("the table does not cut a long reason:\n%s", short.String())
	}
	if !strings.Contains(whole.String(), long) || !strings.Contains(whole.String(), "VIOLATION") {
		t.Errorf("verbose does not print the reason whole:\n%s", whole.String())
	}
}
