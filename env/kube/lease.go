package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

// What a run holds lapses unless the run renews it, so that a run that
// was killed (SIGKILL, a machine that went down) leaves nothing for
// good, with no controller in the cluster: the run's secret and each
// pool pod it claims carry annotationExpires, which the live run moves
// to TTL from now every TTL/3 (the spec's ttl). Once it passes, proctor
// kube clean --expired, the next run in the namespace and proctor kube
// pool up and status remove the run's pods and secret and give back its
// claims. The time is the renewer's clock: the machines that run and
// clean must agree on it within a fraction of the TTL.
const annotationExpires = "proctor.dev/expires"

// expiry is the value of annotationExpires for a lease of ttl from now.
func expiry(now time.Time, ttl time.Duration) string {
	return now.Add(ttl).UTC().Format(time.RFC3339)
}

// lapsed returns when the lease of an object lapses, and whether it had
// lapsed at now. An object without a readable lease (made before leases
// were) never lapses: proctor kube clean --run removes it.
func lapsed(annotations map[string]string, now time.Time) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, annotations[annotationExpires])
	if err != nil {
		return time.Time{}, false
	}
	return t, now.After(t)
}

// renewRun moves the lease of the run's secret to ttl from now, with a
// merge patch (the secret is the run's alone).
func (c *Cluster) renewRun(ctx context.Context, id string, ttl time.Duration, now time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotationExpires: expiry(now, ttl)}}})
	if err != nil {
		return err
	}
	name := (&Run{ID: id}).SecretName()
	if _, err := c.Client.CoreV1().Secrets(c.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("renew the lease of secret %s/%s: %w", c.Namespace, name, err)
	}
	return nil
}

// renewClaims moves the lease of every pool pod the run id holds to ttl
// from now; a pod given back or claimed by another run in between is
// left alone.
func (c *Cluster) renewClaims(ctx context.Context, id string, ttl time.Duration, now time.Time) error {
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: claimSelector(id)})
	if err != nil {
		return fmt.Errorf("list the pool pods run %s holds in namespace %s: %w", id, c.Namespace, err)
	}
	var errs []error
	for _, p := range pl.Items {
		_, err := c.updateClaimed(ctx, p.Name, id, func(p *corev1.Pod) {
			p.Annotations[annotationExpires] = expiry(now, ttl)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("renew the claim on pod %s/%s: %w", c.Namespace, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// updateClaimed changes a pool pod that the run id holds (again on a
// conflict), and does nothing to one that is gone or that another run
// holds. It reports whether it changed the pod.
func (c *Cluster) updateClaimed(ctx context.Context, pod, id string, change func(*corev1.Pod)) (changed bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		changed = false
		p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if p.Labels[LabelClaim] != id {
			return nil
		}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		change(p)
		if _, err := c.Client.CoreV1().Pods(c.Namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
		changed = true
		return nil
	})
	return changed, err
}

// claimSelector selects the pool pods the run id holds ("": any run).
func claimSelector(id string) string {
	req, _ := labels.NewRequirement(LabelClaim, selection.Exists, nil)
	if id != "" {
		req, _ = labels.NewRequirement(LabelClaim, selection.Equals, []string{id})
	}
	return labels.SelectorFromSet(map[string]string{LabelManagedBy: managedBy, LabelName: guestName}).Add(*req).String()
}

// lease renews what a run holds every ttl/3 until stop is called; a
// renewal that fails is said on log (nil: nowhere) and tried again at
// the next.
type lease struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startLease(renew func(ctx context.Context, now time.Time) error, ttl time.Duration, log io.Writer) *lease {
	ctx, cancel := context.WithCancel(context.Background())
	l := &lease{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rctx, rcancel := context.WithTimeout(ctx, ttl/3)
			err := renew(rctx, time.Now())
			rcancel()
			if err != nil && ctx.Err() == nil && log != nil {
				fmt.Fprintf(log, "kube: %v (tried again in %s; the lease lapses after %s without one)\n", err, ttl/3, ttl)
			}
		}
	}()
	return l
}

// stop ends the renewals, and waits for one under way.
func (l *lease) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// ExpiredRun is a run whose lease lapsed, as RemoveExpired removed it.
type ExpiredRun struct {
	ID            string
	Lapsed        time.Time // zero: its pods had no secret left
	Pods, Secrets int
}

// RemoveExpired removes the pods and secret of every run in the
// namespace whose lease lapsed at now (a run that was killed), and the
// run pods whose run has no secret left. Pods are listed before
// secrets, so that a run being made (its secret first, then its pods)
// is never taken for one without a secret.
func (c *Cluster) RemoveExpired(ctx context.Context, now time.Time) ([]ExpiredRun, error) {
	opts := metav1.ListOptions{LabelSelector: ManagedSelector()}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list pods in namespace %s: %w", c.Namespace, err)
	}
	sl, err := c.Client.CoreV1().Secrets(c.Namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list secrets in namespace %s: %w", c.Namespace, err)
	}
	var out []ExpiredRun
	var errs []error
	secret := map[string]bool{}
	for _, s := range sl.Items {
		id := s.Labels[LabelRun]
		if id == "" {
			continue
		}
		secret[id] = true
		at, gone := lapsed(s.Annotations, now)
		if !gone {
			continue
		}
		pods, secrets, err := c.Remove(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", id, err))
		}
		out = append(out, ExpiredRun{ID: id, Lapsed: at, Pods: pods, Secrets: secrets})
	}
	orphans := map[string]*ExpiredRun{}
	for _, p := range pl.Items {
		id := p.Labels[LabelRun]
		if id == "" || secret[id] || p.DeletionTimestamp != nil {
			continue
		}
		if err := c.DeletePod(ctx, p.Name); err != nil {
			errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			continue
		}
		if orphans[id] == nil {
			out = append(out, ExpiredRun{ID: id})
			orphans[id] = &out[len(out)-1]
		}
		orphans[id].Pods++
	}
	return out, errors.Join(errs...)
}

// GiveBackExpired gives back every pool pod in the namespace whose
// claim lapsed at now (the run that holds it was killed), and returns
// how many.
func (c *Cluster) GiveBackExpired(ctx context.Context, now time.Time) (int, error) {
	return c.giveBackWhere(ctx, "", func(p *corev1.Pod) bool {
		_, gone := lapsed(p.Annotations, now)
		return gone
	})
}

// Sweep is what SweepExpired looks for: the objects of runs, the claims
// on pools' pods, or both.
type Sweep struct{ Runs, Claims bool }

// SweepExpired removes what killed runs left in the namespace (as
// RemoveExpired and GiveBackExpired do) and says on log what it
// removed. It is best effort: what it cannot do is said on log too.
func (c *Cluster) SweepExpired(ctx context.Context, what Sweep, log io.Writer) {
	if log == nil {
		log = io.Discard
	}
	now := time.Now()
	if what.Runs {
		runs, err := c.RemoveExpired(ctx, now)
		for _, r := range runs {
			why := "its pods had no secret left"
			if !r.Lapsed.IsZero() {
				why = fmt.Sprintf("its lease lapsed %s ago", now.Sub(r.Lapsed).Round(time.Second))
			}
			fmt.Fprintf(log, "kube: removed %d pods and %d secrets of run %s in namespace %s (%s: the run was killed)\n", r.Pods, r.Secrets, r.ID, c.Namespace, why)
		}
		if err != nil {
			fmt.Fprintf(log, "kube: looking for what killed runs left in namespace %s: %s\n", c.Namespace, oneLine(err))
		}
	}
	if what.Claims {
		n, err := c.GiveBackExpired(ctx, now)
		if n > 0 {
			fmt.Fprintf(log, "kube: gave back %d pods of warm pools in namespace %s whose claims lapsed (their runs were killed)\n", n, c.Namespace)
		}
		if err != nil {
			fmt.Fprintf(log, "kube: looking for lapsed claims on warm pools' pods in namespace %s: %s\n", c.Namespace, oneLine(err))
		}
	}
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
