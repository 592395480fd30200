package xdesktop

import (
	"testing"

	"github.com/proctor-eval/proctor/env/envtest"
)

func TestConformance(t *testing.T) {
	need(t, "yad")
	envtest.Run(t, start(t))
}
