package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func readyNode(name string, ready corev1.ConditionStatus, reason, msg string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: ready, Reason: reason, Message: msg}}}}
}

func nodeLease(name string, renewed time.Time, seconds int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
		Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}, LeaseDurationSeconds: new(seconds)}}
}

// A node is lost when its lease expired unrenewed, when it is not Ready
// or when it is gone; a renewed lease, or none to read, is no loss.
func TestNodeState(t *testing.T) {
	now := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		objs    []runtime.Object
		lost    string
		expires time.Time
	}{
		{"renewed lately", []runtime.Object{readyNode("n1", corev1.ConditionTrue, "", ""), nodeLease("n1", now.Add(-5*time.Second), 40)},
			"", now.Add(35 * time.Second)},
		{"lease expired", []runtime.Object{readyNode("n1", corev1.ConditionTrue, "", ""), nodeLease("n1", now.Add(-52*time.Second), 40)},
			"node n1 stopped answering: its kubelet last renewed its lease kube-node-lease/n1 52s ago (lease duration 40s)", now.Add(-12 * time.Second)},
		{"marked by a node controller", []runtime.Object{readyNode("n1", corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."), nodeLease("n1", now, 40)},
			"node n1 is not Ready (Ready=Unknown, NodeStatusUnknown: Kubelet stopped posting node status.)", time.Time{}},
		{"deleted", nil, "node n1 is gone from the cluster (deleted)", time.Time{}},
		{"no lease", []runtime.Object{readyNode("n1", corev1.ConditionTrue, "", "")}, "", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fakeCluster(tt.objs...)
			st := c.node(context.Background(), "n1", now)
			if st.Lost != tt.lost || !st.Expires.Equal(tt.expires) {
				t.Errorf("node = lost %q, expires %s; want %q, %s", st.Lost, st.Expires, tt.lost, tt.expires)
			}
		})
	}
}

// A watch waits for the lease to expire, and stops waiting when the
// kubelet renews it.
func TestNodeWatch(t *testing.T) {
	now := time.Now()
	c := fakeCluster(readyNode("n1", corev1.ConditionTrue, "", ""), nodeLease("n1", now.Add(-10*time.Second), 40))
	ctx := context.Background()
	var w nodeWatch
	lost, wait := w.look(ctx, c, "n1", now)
	if lost != "" || wait < 30*time.Second || wait > 32*time.Second {
		t.Fatalf("first look = %q, wait %s; want no loss and about 31s to wait", lost, wait)
	}
	if lost, wait := w.look(ctx, c, "n1", now.Add(41*time.Second)); !strings.Contains(lost, "stopped answering") || wait != 0 {
		t.Fatalf("after the lease's end = %q, wait %s; want the node lost", lost, wait)
	}
	w = nodeWatch{}
	w.look(ctx, c, "n1", now)
	if _, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, nodeLease("n1", now, 40), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if lost, wait := w.look(ctx, c, "n1", now.Add(time.Second)); lost != "" || wait != 0 || !w.alive {
		t.Fatalf("after a renewal = %q, wait %s, alive %v; want the node alive, no wait", lost, wait, w.alive)
	}
}

// A pod whose daemon is unreachable on a node whose lease expired is
// lost with the node: NodeLost, deleted at once, and the node avoided.
func TestExplainNodeLost(t *testing.T) {
	c := fakeCluster(readyNode("node-2", corev1.ConditionTrue, "", ""), nodeLease("node-2", time.Now().Add(-45*time.Second), 40))
	ctx := context.Background()
	r, _ := NewRun()
	s, _ := ParseSpec("evals?pods=1")
	pods, err := c.Make(ctx, r, s)
	if err != nil {
		t.Fatal(err)
	}
	p := pods[0]
	p.Spec.NodeName = "node-2"
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if _, err := c.Client.CoreV1().Pods("evals").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := &runState{c: c, run: r, live: 1}
	e := &podEnv{st: st, pod: p.Name}
	err = e.explain(ctx, errClosed)
	var pe *PodError
	if !errors.As(err, &pe) || pe.Reason != "NodeLost" || !strings.HasPrefix(pe.Message, "node node-2 stopped answering: its kubelet last renewed its lease kube-node-lease/node-2 4") {
		t.Fatalf("explain = %v; want NodeLost naming node-2 and its lease", err)
	}
	if !e.force.Load() || !slices.Equal(st.lostNodes(), []string{"node-2"}) {
		t.Errorf("force %v, nodes gone %v: want the pod deleted at once and node-2 avoided", e.force.Load(), st.lostNodes())
	}
	e.Close()
	if _, err := c.Client.CoreV1().Pods("evals").Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
		t.Errorf("the pod of the lost node is still there")
	}
}

// Pods keep off the nodes found gone, in every term of their own node
// affinity.
func TestAvoidNodes(t *testing.T) {
	r, _ := NewRun()
	s, _ := ParseSpec("evals")
	p := r.Pod("evals", 1, s, nil)
	avoidNodes(p, nil)
	if p.Spec.Affinity != nil {
		t.Fatalf("affinity %+v with no node to avoid", p.Spec.Affinity)
	}
	avoidNodes(p, []string{"node-2"})
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	want := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"node-2"}}
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != want.Key ||
		terms[0].MatchFields[0].Operator != want.Operator || !slices.Equal(terms[0].MatchFields[0].Values, want.Values) {
		t.Fatalf("terms %+v, want one with %+v", terms, want)
	}
	// Terms of its own are ORed: each gets the requirement.
	q := r.Pod("evals", 2, s, nil)
	q.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
		}}}}
	avoidNodes(q, []string{"node-2", "node-3"})
	for i, term := range q.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchExpressions) != 1 || len(term.MatchFields) != 1 || !slices.Equal(term.MatchFields[0].Values, []string{"node-2", "node-3"}) {
			t.Errorf("term %d: %+v", i, term)
		}
	}
}

// TestSettle: at a run's end, a deleted pod that stays Terminating on a
// lost node (its lease expired, or its Node gone) is force-deleted; one
// on a node that renews its lease is left to its kubelet.
func TestSettle(t *testing.T) {
	now := time.Now()
	c := fakeCluster(readyNode("dead", corev1.ConditionTrue, "", ""), nodeLease("dead", now.Add(-time.Minute), 40),
		readyNode("well", corev1.ConditionTrue, "", ""), nodeLease("well", now, 40))
	cs := c.Client.(*fake.Clientset)
	ctx := context.Background()
	// Pods with a grace period stay, Terminating, as on a node whose
	// kubelet never confirms their end; a grace of 0 removes them.
	var forced []string
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteActionImpl)
		if g := d.DeleteOptions.GracePeriodSeconds; g != nil && *g == 0 {
			forced = append(forced, d.Name)
			return false, nil, nil
		}
		o, err := cs.Tracker().Get(podsGVR, d.Namespace, d.Name)
		if err != nil {
			return true, nil, err
		}
		p := o.(*corev1.Pod).DeepCopy()
		p.DeletionTimestamp = &metav1.Time{Time: now}
		return true, nil, cs.Tracker().Update(podsGVR, p, d.Namespace)
	})
	for _, pod := range []struct{ name, node string }{{"on-dead", "dead"}, {"on-gone", "gone"}, {"on-well", "well"}} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.name, Namespace: c.Namespace}, Spec: corev1.PodSpec{NodeName: pod.node}}
		if _, err := cs.CoreV1().Pods(c.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.DeletePod(ctx, pod.name); err != nil {
			t.Fatal(err)
		}
	}
	// The well node renews its lease while settle waits on its pod.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		for sctx.Err() == nil {
			time.Sleep(200 * time.Millisecond)
			cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(sctx, nodeLease("well", time.Now(), 40), metav1.UpdateOptions{})
		}
	}()
	var log strings.Builder
	c.settle(sctx, []string{"on-dead", "on-gone", "on-well"}, &log)
	cancel()
	slices.Sort(forced)
	if want := []string{"on-dead", "on-gone"}; !slices.Equal(forced, want) {
		t.Errorf("force-deleted %v, want %v", forced, want)
	}
	for _, want := range []string{
		"kube: pod " + c.Namespace + "/on-dead force-deleted at the run's end: node dead stopped answering: its kubelet last renewed its lease kube-node-lease/dead 1m0s ago (lease duration 40s)",
		"kube: pod " + c.Namespace + "/on-gone force-deleted at the run's end: node gone is gone from the cluster (deleted)",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, log.String())
		}
	}
	if p, err := cs.CoreV1().Pods(c.Namespace).Get(ctx, "on-well", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Errorf("the pod on the well node: %v, %v; want it left Terminating to its kubelet", p, err)
	}
}
