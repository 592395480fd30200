package xdesktop

import (
	"testing"

	"github.com/proctor-eval/proctor/env/envtest"
)

func TestConformance(t *testing.T) {
	need(t, "yad", "xclip")
	envtest.Run(t, start(t))
}
