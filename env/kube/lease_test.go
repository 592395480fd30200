package kube

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runObjects lists the run pods and secrets in the namespace as
// "pod NAME" and "secret NAME".
func runObjects(t *testing.T, c *Cluster) []string {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: ManagedSelector()}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := c.Client.CoreV1().Secrets(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pl.Items {
		out = append(out, "pod "+p.Name)
	}
	for _, s := range sl.Items {
		out = append(out, "secret "+s.Name)
	}
	slices.Sort(out)
	return out
}

// TestRemoveExpired: the objects of a run whose lease lapsed are
// removed, those of a run that renewed its lease are not, nor those of a
// run made before leases were (no lease to read), nor a pool's; pods
// whose run has no secret are removed.
func TestRemoveExpired(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=1&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	s := poolSpec(t, "pods=2&ttl=1m")
	killed, live, old := &Run{ID: "killed"}, &Run{ID: "live"}, &Run{ID: "old"}
	for _, r := range []*Run{killed, live} {
		if _, err := c.Make(ctx, r, s); err != nil {
			t.Fatal(err)
		}
	}
	// A run of a proctor without leases: its secret has no expiry.
	if _, err := cs.CoreV1().Secrets("evals").Create(ctx, old.Secret("evals"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A pod whose run's secret is gone (a removal cut short).
	if _, err := cs.CoreV1().Pods("evals").Create(ctx, (&Run{ID: "orphan"}).Pod("evals", 1, s, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets("evals").Get(ctx, killed.SecretName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := time.Parse(time.RFC3339, sec.Annotations[annotationExpires])
	if err != nil || exp.Sub(time.Now()) > time.Minute || exp.Sub(time.Now()) < 58*time.Second {
		t.Fatalf("the run's secret's lease runs to %q, want a minute from now (%v)", sec.Annotations[annotationExpires], err)
	}
	// Before the lease lapses: only the orphan goes.
	runs, err := c.RemoveExpired(ctx, exp.Add(-time.Second))
	if err != nil || len(runs) != 1 || runs[0] != (ExpiredRun{ID: "orphan", Pods: 1}) {
		t.Fatalf("RemoveExpired before the lease lapsed = %+v, %v; want the orphan pod", runs, err)
	}
	// The live run renews its lease; the killed one does not.
	if err := c.renewRun(ctx, live.ID, time.Minute, exp.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	runs, err = c.RemoveExpired(ctx, exp.Add(2*time.Second))
	if err != nil || len(runs) != 1 || runs[0].ID != "killed" || runs[0].Pods != 2 || runs[0].Secrets != 1 || !runs[0].Lapsed.Equal(exp) {
		t.Fatalf("RemoveExpired after the lease lapsed = %+v, %v; want run killed's 2 pods and secret", runs, err)
	}
	want := []string{"pod proctor-live-1", "pod proctor-live-2", "secret proctor-live", "secret proctor-old"}
	if got := runObjects(t, c); !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if got := poolPodNames(t, c, "warm"); len(got) != 1 {
		t.Errorf("the pool has %v", got)
	}

	// The log says what a sweep removed.
	if err := c.renewRun(ctx, live.ID, time.Minute, time.Now().Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	c.SweepExpired(ctx, Sweep{Runs: true}, &log)
	if !strings.HasPrefix(log.String(), "kube: removed 2 pods and 1 secrets of run live in namespace evals (its lease lapsed 1m") {
		t.Errorf("the sweep said %q", log.String())
	}
}

// TestGiveBackExpired: the claims on pool pods whose lease lapsed are
// given back; those renewed stay, and so do those without a lease.
func TestGiveBackExpired(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=4&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, claim := range []struct {
		id string
		n  int
	}{{"killed", 2}, {"live", 1}, {"old", 1}} {
		if pods, err := c.ClaimFor(ctx, "warm", claim.id, claim.n, time.Minute); err != nil || len(pods) != claim.n {
			t.Fatalf("claim %d for %s: %v, %v", claim.n, claim.id, pods, err)
		}
	}
	// A claim made before leases were.
	p, err := cs.CoreV1().Pods("evals").Get(ctx, "proctor-pool-warm-4", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(p.Annotations, annotationExpires)
	if _, err := cs.CoreV1().Pods("evals").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.renewClaims(ctx, "live", time.Minute, start.Add(50*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.GiveBackExpired(ctx, start.Add(30*time.Second)); n != 0 || err != nil {
		t.Errorf("GiveBackExpired before the leases lapsed = %d, %v", n, err)
	}
	if n, err := c.GiveBackExpired(ctx, start.Add(70*time.Second)); n != 2 || err != nil {
		t.Errorf("GiveBackExpired after the killed run's lease lapsed = %d, %v; want its 2", n, err)
	}
	want := []string{"proctor-pool-warm-1", "proctor-pool-warm-2", "proctor-pool-warm-3=live", "proctor-pool-warm-4=old"}
	if got := poolPodNames(t, c, "warm"); !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
	for _, name := range []string{"proctor-pool-warm-1", "proctor-pool-warm-2"} {
		p, err := cs.CoreV1().Pods("evals").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Annotations[annotationExpires]; ok {
			t.Errorf("pod %s was given back with its lease: %v", name, p.Annotations)
		}
	}
	// A renewal leaves a pod given back in between alone.
	if err := c.renewClaims(ctx, "killed", time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := poolPodNames(t, c, "warm"); !slices.Equal(got, want) {
		t.Errorf("after renewing a run's claims that were given back: %v", got)
	}
}

// TestLeaseRenews: the lease renews until it is stopped, and not after.
func TestLeaseRenews(t *testing.T) {
	calls := make(chan time.Time, 100)
	l := startLease(func(ctx context.Context, now time.Time) error {
		calls <- now
		return nil
	}, 3*time.Millisecond, nil)
	for range 3 {
		<-calls
	}
	l.stop()
	n := len(calls)
	time.Sleep(20 * time.Millisecond)
	if len(calls) != n {
		t.Errorf("the lease renewed %d times after it was stopped", len(calls)-n)
	}
	l.stop() // stopping twice is harmless
}

// TestSourcesSweep: a run on its own pods removes what a killed run left
// before it makes its own.
func TestSourcesSweep(t *testing.T) {
	c, cs := poolCluster(t, func(name string) bool { return !strings.Contains(name, "killed") })
	ctx := context.Background()
	killed := &Run{ID: "killed"}
	if _, err := c.Make(ctx, killed, poolSpec(t, "pods=1")); err != nil {
		t.Fatal(err)
	}
	if err := c.renewRun(ctx, killed.ID, time.Minute, time.Now().Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets("evals").Get(ctx, killed.SecretName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, gone := lapsed(sec.Annotations, time.Now()); !gone {
		t.Fatalf("the killed run's lease has not lapsed: %v", sec.Annotations)
	}
	// The new run's pod is never Ready on the fake cluster: Sources
	// fails after the sweep and removes its own run.
	var log bytes.Buffer
	_, err = c.Sources(ctx, poolSpec(t, "pods=1&wait=300ms&connect=ip&ttl=3s"), &log)
	if err == nil || !strings.Contains(err.Error(), "not Ready within 300ms") {
		t.Fatalf("Sources = %v, want the new run's pod not Ready", err)
	}
	if !strings.Contains(log.String(), "kube: removed 1 pods and 1 secrets of run killed in namespace evals (its lease lapsed ") {
		t.Errorf("the run did not say it removed the killed run's objects:\n%s", log.String())
	}
	if got := runObjects(t, c); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}
