package kube

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/proctor-eval/proctor/env"
)

func withStatus(st corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "proctor-ab12cd34-1", Namespace: "evals"}, Status: st}
}

func waiting(reason, msg string) []corev1.ContainerStatus {
	return []corev1.ContainerStatus{{Name: "guest", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
}

func TestPodFailure(t *testing.T) {
	now := metav1.Now()
	deleted := withStatus(corev1.PodStatus{Phase: corev1.PodRunning})
	deleted.DeletionTimestamp = &now
	// A pod whose deletion was asked for at ask (grace 2 s), and whose
	// container ended at end.
	deletedAndEnded := func(end time.Time, reason string, code int32) *corev1.Pod {
		ask := now.Add(-time.Minute).Truncate(time.Second)
		p := withStatus(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, FinishedAt: metav1.NewTime(end)}}}}})
		at := metav1.NewTime(ask.Add(2 * time.Second))
		grace := int64(2)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &at, &grace
		return p
	}
	asked := now.Add(-time.Minute).Truncate(time.Second)
	tests := []struct {
		name   string
		pod    *corev1.Pod
		reason string // "": no failure
		msg    string
		final  bool
	}{
		{name: "pending, not scheduled yet", pod: withStatus(corev1.PodStatus{Phase: corev1.PodPending})},
		{name: "creating the container", pod: withStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ContainerCreating", "")})},
		{name: "running", pod: withStatus(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}})},
		{name: "image pull back-off",
			pod:    withStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ImagePullBackOff", `Back-off pulling image "proctor-guest:nope"`)}),
			reason: "ImagePullBackOff", msg: `Back-off pulling image "proctor-guest:nope"`, final: true},
		{name: "image pull error",
			pod:    withStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ErrImagePull", "not found")}),
			reason: "ErrImagePull", msg: "not found", final: true},
		{name: "unschedulable, in the scheduler's words",
			pod: withStatus(corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/2 nodes are available: 2 Insufficient memory. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."}}}),
			reason: "Unschedulable", msg: "0/2 nodes are available: 2 Insufficient memory.", final: false},
		{name: "killed for memory",
			pod: withStatus(corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}),
			reason: "OOMKilled", msg: "exit code 137 after using all the memory its limit allows", final: true},
		{name: "killed for memory before, waiting now",
			pod: withStatus(corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}),
			reason: "OOMKilled", final: true},
		{name: "evicted",
			pod: withStatus(corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted",
				Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi."}),
			reason: "Evicted", msg: "The node was low on resource: memory.", final: true},
		{name: "deleted", pod: deleted, reason: "Deleted", msg: "the pod was deleted", final: true},
		{name: "deleted, its container then stopped",
			pod:    deletedAndEnded(asked.Add(time.Second), "Completed", 0),
			reason: "Deleted", msg: "the pod was deleted; then the container ended with exit code 0", final: true},
		{name: "deleted, its container stopped in the same second",
			pod:    deletedAndEnded(asked, "Error", 143),
			reason: "Deleted", msg: "the pod was deleted; then the container ended with exit code 143", final: true},
		{name: "the container failed, then its pod was deleted",
			pod:    deletedAndEnded(asked.Add(-3*time.Second), "Error", 1),
			reason: "Error", msg: "exit code 1", final: true},
		{name: "killed for memory as its pod was deleted",
			pod:    deletedAndEnded(asked.Add(time.Second), "OOMKilled", 137),
			reason: "OOMKilled", msg: "exit code 137", final: true},
		{name: "ended without a reason", pod: withStatus(corev1.PodStatus{Phase: corev1.PodSucceeded}), reason: "PodSucceeded", final: true},
		{name: "the daemon exited",
			pod: withStatus(corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: "no Xvfb"}}}}}),
			reason: "Error", msg: "exit code 1: no Xvfb", final: true},
		{name: "a missing secret", pod: withStatus(corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("CreateContainerConfigError", `secret "proctor-x" not found`)}),
			reason: "CreateContainerConfigError", msg: `secret "proctor-x" not found`, final: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := PodFailure(tt.pod)
			if tt.reason == "" {
				if f != nil {
					t.Fatalf("PodFailure = %v, want none", f)
				}
				return
			}
			if f == nil {
				t.Fatalf("PodFailure = nil, want %s", tt.reason)
			}
			if f.Reason != tt.reason || f.Final != tt.final || !strings.Contains(f.Message, tt.msg) {
				t.Errorf("PodFailure = %+v, want reason %s final %v and a message with %q", f, tt.reason, tt.final, tt.msg)
			}
			if !strings.HasPrefix(f.Error(), "pod evals/proctor-ab12cd34-1: "+tt.reason) {
				t.Errorf("the error %q does not start with the pod and the reason", f.Error())
			}
			// The runner takes it for an environment that is gone, never
			// for a failed task.
			if !errors.Is(f, env.ErrClosed) || !errors.Is(f, ErrPod) {
				t.Errorf("%v is not env.ErrClosed and ErrPod", f)
			}
		})
	}
}

func TestPodReady(t *testing.T) {
	for _, tt := range []struct {
		conds []corev1.PodCondition
		want  bool
	}{
		{nil, false},
		{[]corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}, false},
		{[]corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}, false},
		{[]corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}, true},
	} {
		if got := PodReady(withStatus(corev1.PodStatus{Conditions: tt.conds})); got != tt.want {
			t.Errorf("PodReady(%v) = %v, want %v", tt.conds, got, tt.want)
		}
	}
}
