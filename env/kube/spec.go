package kube

import "github.com/proctor-eval/proctor/env/kube/kubespec"

// Spec is what an --env kube://[CONTEXT/]NAMESPACE?... value asks for;
// package kubespec reads it.
type Spec = kubespec.Spec

// The form of the value and the defaults of a spec.
const (
	Usage        = kubespec.Usage
	DefaultImage = kubespec.DefaultImage
	DefaultWait  = kubespec.DefaultWait
	DefaultTTL   = kubespec.DefaultTTL
)

// ParseSpec reads what follows "kube://" (kubespec.Parse).
func ParseSpec(arg string) (Spec, error) { return kubespec.Parse(arg) }
