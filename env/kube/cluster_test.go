package kube

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/remote"
)

// errClosed is what the daemon's client says of a connection that broke.
var errClosed = fmt.Errorf("guest at https://127.0.0.1:40000: %w", env.ErrClosed)

// fakeCluster is a cluster on client-go's fake clientset whose created
// objects get a UID, as an API server gives them.
func fakeCluster(objs ...runtime.Object) *Cluster {
	cs := fake.NewClientset(objs...)
	n := 0
	cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && o.GetUID() == "" {
			n++
			o.SetUID(types.UID("uid-" + strings.Repeat("x", n)))
		}
		return false, nil, nil
	})
	return &Cluster{Client: cs, Namespace: "evals"}
}

func TestNewRun(t *testing.T) {
	a, err := NewRun()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRun()
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || a.Token == b.Token || a.Fingerprint == b.Fingerprint {
		t.Errorf("two runs share an id, token or certificate: %s %s", a.ID, b.ID)
	}
	if len(a.ID) != 8 || len(a.Token) < 32 {
		t.Errorf("id %q, token of %d characters", a.ID, len(a.Token))
	}
	// The pin is the fingerprint of the certificate the pods serve.
	blk, _ := pem.Decode(a.CertPEM)
	if blk == nil {
		t.Fatal("no PEM certificate")
	}
	if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
		t.Fatal(err)
	}
	if got := remote.Fingerprint(blk.Bytes); got != a.Fingerprint {
		t.Errorf("fingerprint %s, the certificate's is %s", a.Fingerprint, got)
	}
	if _, err := remote.ParseTarget("https://127.0.0.1:7400#sha256=" + a.Fingerprint); err != nil {
		t.Errorf("the pin is not one a target takes: %v", err)
	}
}

func TestMakeObjects(t *testing.T) {
	c := fakeCluster()
	r, err := NewRun()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSpec("evals?pods=3&image=reg.example/guest:1&memory=768Mi&cpu=250m&node=pool=evals&runtime-class=gvisor&size=1024x768&pull=IfNotPresent&toleration=gpu=true:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods, err := c.Make(ctx, r, s)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := c.Client.CoreV1().Secrets("evals").Get(ctx, r.SecretName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["token"]) != r.Token || string(sec.Data["tls.crt"]) != string(r.CertPEM) || string(sec.Data["tls.key"]) != string(r.KeyPEM) {
		t.Error("the secret does not hold the run's token and key pair")
	}
	if sec.Labels[LabelRun] != r.ID || sec.Labels[LabelManagedBy] != "proctor" {
		t.Errorf("secret labels %v", sec.Labels)
	}
	var names []string
	for i, p := range pods {
		names = append(names, p.Name)
		if p.Labels[LabelRun] != r.ID || p.Labels[LabelManagedBy] != "proctor" || p.Labels[LabelIndex] != string(rune('1'+i)) {
			t.Errorf("pod %s labels %v", p.Name, p.Labels)
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != sec.UID || p.OwnerReferences[0].Kind != "Secret" {
			t.Errorf("pod %s owners %+v, want the secret %s", p.Name, p.OwnerReferences, sec.UID)
		}
		sp := p.Spec
		if *sp.TerminationGracePeriodSeconds != gracePeriod || *sp.AutomountServiceAccountToken || sp.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("pod %s: grace %d, service-account token %v, restart %s", p.Name, *sp.TerminationGracePeriodSeconds, *sp.AutomountServiceAccountToken, sp.RestartPolicy)
		}
		if sp.NodeSelector["pool"] != "evals" || *sp.RuntimeClassName != "gvisor" {
			t.Errorf("pod %s: node selector %v, runtime class %v", p.Name, sp.NodeSelector, sp.RuntimeClassName)
		}
		ctr := sp.Containers[0]
		if want := (corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}); len(sp.Tolerations) != 1 || sp.Tolerations[0] != want {
			t.Errorf("pod %s: tolerations %+v, want %+v", p.Name, sp.Tolerations, want)
		}
		if ctr := sp.Containers[0]; ctr.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("pod %s: pull policy %q", p.Name, ctr.ImagePullPolicy)
		}
		if ctr.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("pod %s: termination message policy %q: a guest that fails would not say why", p.Name, ctr.TerminationMessagePolicy)
		}
		if ctr.Image != "reg.example/guest:1" || ctr.ReadinessProbe.TCPSocket.Port.IntValue() != GuestPort {
			t.Errorf("pod %s: image %s, probe %+v", p.Name, ctr.Image, ctr.ReadinessProbe)
		}
		if ctr.Resources.Requests.Memory().String() != "768Mi" || ctr.Resources.Limits.Memory().String() != "768Mi" || ctr.Resources.Requests.Cpu().String() != "250m" {
			t.Errorf("pod %s: resources %+v", p.Name, ctr.Resources)
		}
		if _, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok {
			t.Errorf("pod %s: a CPU limit nobody asked for", p.Name)
		}
		cmd := strings.Join(ctr.Command, " ")
		for _, want := range []string{"proctor guest --local", "--size 1024x768", "--token-file /var/run/proctor/token", "--tls-cert /var/run/proctor/tls.crt", "--listen 0.0.0.0:7400"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("pod %s: command %q lacks %q", p.Name, cmd, want)
			}
		}
		if v := sp.Volumes[0].Secret; v.SecretName != r.SecretName() || *v.DefaultMode != 0o400 {
			t.Errorf("pod %s: volume %+v", p.Name, v)
		}
	}
	if want := []string{r.PodName(1), r.PodName(2), r.PodName(3)}; !slices.Equal(names, want) {
		t.Errorf("pods %v, want %v", names, want)
	}
}

// setStatus gives a made pod a status, as its node would.
func setStatus(t *testing.T, c *Cluster, name string, st corev1.PodStatus) {
	t.Helper()
	ctx := context.Background()
	p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status = st
	if _, err := c.Client.CoreV1().Pods(c.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var readyStatus = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}

func TestWaitReady(t *testing.T) {
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
		Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes are available: 2 Insufficient memory."}}}
	tests := []struct {
		name   string
		second *corev1.PodStatus // the second pod's status; nil: deleted
		limit  time.Duration
		reason string // "": ready
		msg    string
	}{
		{name: "all ready", second: &readyStatus, limit: time.Minute},
		{name: "an image that does not exist fails at once", limit: time.Hour, reason: "ImagePullBackOff", msg: `Back-off pulling image "nope"`,
			second: &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: waiting("ImagePullBackOff", `Back-off pulling image "nope"`)}},
		{name: "killed for memory", limit: time.Hour, reason: "OOMKilled",
			second: &corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}}},
		{name: "unschedulable until the limit", second: &unschedulable, limit: 300 * time.Millisecond, reason: "Unschedulable",
			msg: "not Ready within 300ms: 0/2 nodes are available: 2 Insufficient memory."},
		{name: "running, never ready", limit: 300 * time.Millisecond, reason: "NotReady", msg: "readiness probe on port 7400",
			second: &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}},
		{name: "deleted", limit: time.Hour, msg: "1 of the run's 2 pods are gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fakeCluster()
			r, _ := NewRun()
			s, _ := ParseSpec("evals?pods=2")
			if _, err := c.Make(context.Background(), r, s); err != nil {
				t.Fatal(err)
			}
			setStatus(t, c, r.PodName(1), readyStatus)
			if tt.second != nil {
				setStatus(t, c, r.PodName(2), *tt.second)
			} else if err := c.Client.CoreV1().Pods("evals").Delete(context.Background(), r.PodName(2), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			ready, err := c.WaitReady(context.Background(), r, 2, tt.limit, 20*time.Millisecond)
			if tt.reason == "" && tt.msg == "" {
				if err != nil || len(ready) != 2 || ready[r.PodName(2)].Status.PodIP != "10.1.2.3" {
					t.Fatalf("WaitReady = %v, %v", ready, err)
				}
				return
			}
			if err == nil {
				t.Fatal("WaitReady: no error")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
			if tt.reason == "" {
				return
			}
			var pe *PodError
			if !errors.As(err, &pe) || pe.Reason != tt.reason || pe.Pod != "evals/"+r.PodName(2) {
				t.Errorf("error %v: want a PodError of pod %s with reason %s", err, r.PodName(2), tt.reason)
			}
		})
	}
}

func TestRemove(t *testing.T) {
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: "evals", Labels: map[string]string{"app": "db"}}}
	c := fakeCluster(other)
	ctx := context.Background()
	s, _ := ParseSpec("evals?pods=2")
	var runs []*Run
	for range 2 {
		r, _ := NewRun()
		if _, err := c.Make(ctx, r, s); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	count := func() (pods, secrets int) {
		pl, _ := c.Client.CoreV1().Pods("evals").List(ctx, metav1.ListOptions{})
		sl, _ := c.Client.CoreV1().Secrets("evals").List(ctx, metav1.ListOptions{})
		return len(pl.Items), len(sl.Items)
	}
	pods, secrets, err := c.Remove(ctx, runs[0].ID)
	if err != nil || pods != 2 || secrets != 1 {
		t.Fatalf("Remove(run) = %d pods, %d secrets, %v; want 2, 1", pods, secrets, err)
	}
	if p, s := count(); p != 3 || s != 1 {
		t.Fatalf("left %d pods and %d secrets, want the other run's 2 and the unrelated pod, and 1 secret", p, s)
	}
	pods, secrets, err = c.Remove(ctx, "")
	if err != nil || pods != 2 || secrets != 1 {
		t.Fatalf("Remove(all) = %d pods, %d secrets, %v; want 2, 1", pods, secrets, err)
	}
	if p, s := count(); p != 1 || s != 0 {
		t.Fatalf("left %d pods and %d secrets, want only the unrelated pod", p, s)
	}
}

// A pod that is gone is explained as deleted; one that failed in its
// node's words.
func TestExplain(t *testing.T) {
	c := fakeCluster()
	ctx := context.Background()
	r, _ := NewRun()
	s, _ := ParseSpec("evals?pods=2")
	if _, err := c.Make(ctx, r, s); err != nil {
		t.Fatal(err)
	}
	setStatus(t, c, r.PodName(1), corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."})
	if err := c.Client.CoreV1().Pods("evals").Delete(ctx, r.PodName(2), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	st := &runState{c: c, run: r, live: 2}
	lost := remote.ErrFingerprint // not a connection loss: kept as it is
	for _, tt := range []struct {
		pod  string
		err  error
		want string
	}{
		{r.PodName(1), errClosed, "pod evals/" + r.PodName(1) + ": Evicted: The node was low on resource: memory."},
		{r.PodName(2), errClosed, "pod evals/" + r.PodName(2) + ": Deleted: the pod is gone from the cluster"},
		{r.PodName(1), lost, lost.Error()},
	} {
		e := &podEnv{st: st, pod: tt.pod}
		if got := e.explain(ctx, tt.err); got.Error() != tt.want {
			t.Errorf("explain(%s, %v) = %q, want %q", tt.pod, tt.err, got, tt.want)
		}
	}
}
