package kube

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/proctor-eval/proctor/env"
)

// ErrPod is the sentinel of a pod that cannot serve: it did not start, or
// it ended. A PodError wraps it (and env.ErrClosed, so that the runner
// takes it for an environment that is gone, never for a failed task).
const ErrPod = env.Error("guest pod failed")

// PodError says what Kubernetes said of a pod that cannot serve.
type PodError struct {
	Pod    string // namespace/name
	Reason string // Kubernetes' reason: ImagePullBackOff, Unschedulable, OOMKilled, Evicted, Deleted, ...
	// Message is Kubernetes' message (the scheduler's, the runtime's),
	// or a description of ours where it gave none.
	Message string
	// Final means it will not come right by waiting (an image pull that
	// backs off may; a pod that ended will not).
	Final bool
}

func (e *PodError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("pod %s: %s", e.Pod, e.Reason)
	}
	return fmt.Sprintf("pod %s: %s: %s", e.Pod, e.Reason, e.Message)
}

func (e *PodError) Unwrap() []error { return []error{ErrPod, env.ErrClosed} }

// waitingFatal are the reasons of a waiting container that do not pass
// by themselves: the pod will not become Ready.
var waitingFatal = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
	"CrashLoopBackOff":           true,
}

// PodFailure returns why the pod cannot serve, in Kubernetes' words, or
// nil when it may still (it is pending, or running). Unschedulable is
// not final: a cluster that grows may place the pod later.
func PodFailure(p *corev1.Pod) *PodError {
	name := p.Namespace + "/" + p.Name
	fail := func(reason, msg string, final bool) *PodError {
		return &PodError{Pod: name, Reason: reason, Message: strings.TrimSpace(msg), Final: final}
	}
	// A container that ended, with its reason (OOMKilled, Error) or a
	// runtime that cannot make it.
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			if endedByDeletion(p, t) {
				return fail("Deleted", "the pod was deleted; then "+terminatedMessage(t), true)
			}
			return fail(orElse(t.Reason, "Terminated"), terminatedMessage(t), true)
		}
		if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
			return fail("OOMKilled", terminatedMessage(t), true)
		}
		if w := cs.State.Waiting; w != nil && waitingFatal[w.Reason] {
			return fail(w.Reason, w.Message, true)
		}
	}
	if p.DeletionTimestamp != nil {
		return fail("Deleted", "the pod was deleted", true)
	}
	switch p.Status.Phase {
	case corev1.PodFailed, corev1.PodSucceeded:
		// Evicted, Preempting, DeadlineExceeded, NodeLost, Shutdown...
		return fail(orElse(p.Status.Reason, "Pod"+string(p.Status.Phase)), p.Status.Message, true)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return fail(c.Reason, c.Message, false)
		}
	}
	return nil
}

// endedByDeletion reports whether a container that ended did so because
// its pod was deleted: it ended (to the second) no earlier than the
// deletion was asked for, and not for memory. A deleted pod's container is
// stopped by its kubelet, often with exit code 0 ("Completed"), and the
// status saying so may come before the pod is gone.
func endedByDeletion(p *corev1.Pod, t *corev1.ContainerStateTerminated) bool {
	if p.DeletionTimestamp == nil || t.Reason == "OOMKilled" {
		return false
	}
	if t.FinishedAt.IsZero() {
		return true
	}
	asked := p.DeletionTimestamp.Time
	if g := p.DeletionGracePeriodSeconds; g != nil {
		asked = asked.Add(-time.Duration(*g) * time.Second)
	}
	return !t.FinishedAt.Time.Before(asked.Truncate(time.Second))
}

// terminatedMessage describes how a container ended.
func terminatedMessage(t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("the container ended with exit code %d", t.ExitCode)
	if t.Signal != 0 {
		msg += fmt.Sprintf(" (signal %d)", t.Signal)
	}
	if t.Reason == "OOMKilled" {
		msg += " after using all the memory its limit allows"
	}
	if m := strings.TrimSpace(t.Message); m != "" {
		msg += ": " + m
	}
	return msg
}

// PodReady reports whether the pod's Ready condition is true.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// pending describes a pod that is neither Ready nor failed, for the
// message of a wait that ran out.
func pending(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return orElse(strings.TrimSpace(w.Reason+": "+w.Message), w.Reason)
		}
		if cs.State.Running != nil {
			return "running, not Ready (its readiness probe on port 7400 does not pass)"
		}
	}
	if p.Spec.NodeName == "" {
		return "not scheduled yet"
	}
	return "phase " + orElse(string(p.Status.Phase), "Pending") + " on node " + p.Spec.NodeName
}

func orElse(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
