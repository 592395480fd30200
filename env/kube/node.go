package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxNodeWait bounds how long a pod whose daemon cannot be reached waits
// for its node's lease to show whether the node is gone: a lease lasts
// 40 s by default (the kubelet's, and virtual-kubelet's).
const maxNodeWait = 90 * time.Second

// nodeState is what the cluster says of the node a pod runs on.
type nodeState struct {
	// Lost, when not empty, says in Kubernetes' terms why the node is
	// taken for gone: its lease expired, its Ready condition is not
	// True, or it was deleted.
	Lost string
	// Renewed is its lease's last renewal and Expires when the lease
	// runs out without another (zero: no lease to read).
	Renewed, Expires time.Time
}

// node reads the state of a node: its Node (deleted, or not Ready as a
// node controller marks it) and its Lease in kube-node-lease, which its
// kubelet renews. What the runner may not read (RBAC) or cannot fetch
// leaves the state unknown: nothing lost.
func (c *Cluster) node(ctx context.Context, name string, now time.Time) nodeState {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nodeState{Lost: fmt.Sprintf("node %s is gone from the cluster (deleted)", name)}
	case err != nil:
		return nodeState{}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
			return nodeState{Lost: fmt.Sprintf("node %s is not Ready (Ready=%s, %s: %s)", name, cond.Status, orElse(cond.Reason, "no reason"), orElse(cond.Message, "no message"))}
		}
	}
	l, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
	if err != nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return nodeState{}
	}
	st := nodeState{Renewed: l.Spec.RenewTime.Time}
	d := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	st.Expires = st.Renewed.Add(d)
	if now.After(st.Expires) {
		st.Lost = fmt.Sprintf("node %s stopped answering: its kubelet last renewed its lease %s/%s %s ago (lease duration %s)",
			name, corev1.NamespaceNodeLease, name, now.Sub(st.Renewed).Round(time.Second), d)
	}
	return st
}

// nodeWatch follows the node of a pod whose daemon cannot be reached,
// until it can say whether the node is gone: lost once the lease expires
// unrenewed, alive once the kubelet renews it.
type nodeWatch struct {
	first time.Time // the renewal first seen; zero: none yet
	alive bool      // renewed since: the node answers
}

// look reads the node; it returns the node's loss (or ""), and how long
// to wait at most for the answer from now (0: no need to wait).
func (w *nodeWatch) look(ctx context.Context, c *Cluster, name string, now time.Time) (string, time.Duration) {
	st := c.node(ctx, name, now)
	if st.Lost != "" {
		return st.Lost, 0
	}
	if st.Renewed.IsZero() || w.alive {
		return "", 0
	}
	switch {
	case w.first.IsZero():
		w.first = st.Renewed
	case !st.Renewed.Equal(w.first):
		w.alive = true
		return "", 0
	}
	return "", st.Expires.Sub(now) + time.Second
}

// lostNodes returns the nodes the run found gone.
func (st *runState) lostNodes() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.gone)
}

// nodeGone records a node the run found gone; later pods avoid it.
func (st *runState) nodeGone(name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !slices.Contains(st.gone, name) {
		st.gone = append(st.gone, name)
	}
}

// avoidNodes keeps the pod off nodes (with no node controller, a node
// that stopped answering stays Ready and the scheduler would place the
// pod there again).
func avoidNodes(p *corev1.Pod, nodes []string) {
	if len(nodes) == 0 {
		return
	}
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: slices.Clone(nodes)}}}
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	req := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil {
		req = &corev1.NodeSelector{}
		p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	if len(req.NodeSelectorTerms) == 0 {
		req.NodeSelectorTerms = []corev1.NodeSelectorTerm{term}
		return
	}
	// The terms are ORed: each must keep off the nodes.
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchFields = append(req.NodeSelectorTerms[i].MatchFields, term.MatchFields...)
	}
}

// ForceDeletePod deletes a pod at once (grace 0), as one does for a pod
// of a node that is gone: no kubelet is left to confirm a graceful end.
func (c *Cluster) ForceDeletePod(ctx context.Context, name string) error {
	err := c.Client.CoreV1().Pods(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// waitPod waits until one pod is Ready, for at most limit; it fails at
// once when the pod cannot become Ready, and at the limit with what it
// waits for (as WaitReady does for a run's pods).
func (c *Cluster) waitPod(ctx context.Context, name string, limit time.Duration) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last *corev1.Pod
	for {
		p, err := c.Pod(ctx, name)
		switch {
		case err == nil:
			last = p
			if f := PodFailure(p); f != nil && f.Final {
				return nil, f
			}
			if PodReady(p) {
				return p, nil
			}
		case ctx.Err() == nil:
			return nil, err
		}
		select {
		case <-ctx.Done():
			if last != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return nil, notReady([]corev1.Pod{*last}, limit)
			}
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// settleMargin is how long past its grace period a deleted pod may take
// to go before settle asks whether its node is gone.
const settleMargin = 3 * time.Second

// settle waits, at the end of a run, until the named pods, which the run
// deleted, are gone. A pod still there on a node that is lost (its lease
// expired unrenewed, its Node gone or not Ready) is force-deleted, as no
// kubelet is left to confirm its end and it would stay Terminating for
// good; log (nil: nowhere) says so. A pod that outlives its grace period
// on a node that still looks well is waited for until the node's lease
// tells (at most maxNodeWait); one on a node that renews its lease, or
// whose state the run may not read, is left to its kubelet.
func (c *Cluster) settle(ctx context.Context, names []string, log io.Writer) {
	begin := time.Now()
	watches := map[string]*nodeWatch{}
	left := names
	for len(left) > 0 && ctx.Err() == nil {
		type look struct {
			lost string
			wait time.Duration
		}
		looked := map[string]look{}
		var still []string
		for _, name := range left {
			p, err := c.Pod(ctx, name)
			if err != nil || p.DeletionTimestamp == nil || p.Spec.NodeName == "" {
				continue // gone, unreadable, or not deleted: nothing to wait for
			}
			n := p.Spec.NodeName
			l, ok := looked[n]
			if !ok {
				if watches[n] == nil {
					watches[n] = &nodeWatch{}
				}
				l.lost, l.wait = watches[n].look(ctx, c, n, time.Now())
				looked[n] = l
			}
			switch {
			case l.lost != "":
				if err := c.ForceDeletePod(ctx, name); err == nil && log != nil {
					fmt.Fprintf(log, "kube: pod %s/%s force-deleted at the run's end: %s\n", c.Namespace, name, l.lost)
				}
			case time.Since(begin) < gracePeriod*time.Second+settleMargin || l.wait > 0:
				still = append(still, name)
			}
		}
		left = still
		if len(left) == 0 || time.Since(begin) > maxNodeWait {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// settleRun lists the pods of the run id that are left (deleted, not
// yet gone) and settles them.
func (c *Cluster) settleRun(ctx context.Context, id string, log io.Writer) {
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: (&Run{ID: id}).Selector()})
	if err != nil {
		return
	}
	var names []string
	for _, p := range pl.Items {
		names = append(names, p.Name)
	}
	c.settle(ctx, names, log)
}
