package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/env/remote"
)

// PoolSources claims up to s.Pods Ready pods of the pool s.Pool for a new
// run; with fewer free, it grows the pool up to its max with pods made
// for the run (deleted when the run is done with them), then waits at
// most s.Wait for more (with fewer it goes on with those it has; with
// none it fails, saying what holds the pool), dials each
// daemon with the pool's token, pinning the pool's certificate, and
// returns their places. A place's release gives its pod back to the
// pool, or, when the pod was lost (it failed, or its daemon no longer
// answers), deletes it and makes another in the pool in its place.
func (c *Cluster) PoolSources(ctx context.Context, s Spec, log io.Writer) (_ []env.Source, err error) {
	start := time.Now()
	c.SweepExpired(ctx, Sweep{Claims: true}, log)
	r, err := NewRun()
	if err != nil {
		return nil, err
	}
	sec, cred, err := c.poolSecret(ctx, s.Pool)
	if err != nil {
		return nil, err
	}
	pr := &poolRun{c: c, pool: s.Pool, id: r.ID, log: log}
	pr.lease = startLease(func(ctx context.Context, now time.Time) error { return c.renewClaims(ctx, r.ID, s.TTL, now) }, s.TTL, log)
	var claimed []*corev1.Pod
	var made []*poolEnv
	defer func() {
		if err != nil {
			for _, e := range made {
				e.closeConn()
			}
			pr.lease.stop()
			if len(claimed) > 0 {
				for _, p := range claimed {
					c.GiveBack(context.WithoutCancel(ctx), p.Name, r.ID)
				}
				err = fmt.Errorf("%w (the claimed pods were given back to pool %s)", err, s.Pool)
			}
		}
	}()
	deadline := time.Now().Add(s.Wait)
	grew := 0
	for tried := false; len(claimed) < s.Pods; {
		got, err := c.ClaimFor(ctx, s.Pool, r.ID, s.Pods-len(claimed), s.TTL)
		claimed = append(claimed, got...)
		if err != nil {
			return nil, err
		}
		if len(claimed) < s.Pods && !tried {
			// Fewer free pods than the run can use: the pool grows, up
			// to its max, with pods of the run's own.
			tried = true
			more, err := c.grow(ctx, s.Pool, r.ID, s.Pods-len(claimed), s.TTL, s.Wait, sec, cred)
			claimed = append(claimed, more...)
			grew = len(more)
			if err != nil {
				if len(claimed) == 0 {
					return nil, fmt.Errorf("pool %s: no pod free, and a pod made for the run did not start: %w", s.Pool, err)
				}
				if log != nil {
					fmt.Fprintf(log, "kube: pool %s: a pod made for run %s did not start (it was deleted): %s\n", s.Pool, r.ID, oneLine(err))
				}
			}
			continue
		}
		if len(claimed) == s.Pods || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	if len(claimed) == 0 {
		pods, _, err := c.PoolStatus(ctx, s.Pool)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no pod of pool %s in namespace %s was Ready and free within %s: %s", s.Pool, c.Namespace, s.Wait, describePool(pods))
	}
	if log != nil {
		short := ""
		if grew > 0 {
			short = fmt.Sprintf(" (%d of them made for it: pool %s grew to at most %d pods; they are deleted when the run is done with them)", grew, s.Pool, cred.max)
		}
		if len(claimed) < s.Pods {
			short += fmt.Sprintf(" (of the %d asked for: the others were not free within %s)", s.Pods, s.Wait)
		}
		fmt.Fprintf(log, "kube: run %s: claimed %d Ready pods of pool %s in namespace %s%s in %s (if this run is killed, proctor kube clean --run %s gives them back, and so does the next run on a pool once its lease of %s lapses)\n",
			r.ID, len(claimed), s.Pool, c.Namespace, short, time.Since(start).Round(100*time.Millisecond), r.ID, s.TTL)
	}
	pr.live = len(claimed)
	byIP := s.Connect == "ip" || s.Connect == "" && c.InCluster
	st := &runState{c: c, run: &Run{ID: r.ID, Token: cred.token, Fingerprint: cred.fingerprint}}
	var out []env.Source
	for _, p := range claimed {
		name := p.Name
		e := &poolEnv{podEnv: &podEnv{st: st, pod: name}, pr: pr}
		if byIP {
			e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(GuestPort)), Fingerprint: cred.fingerprint}
		} else {
			if e.fwd, err = c.Forward(name); err != nil {
				return nil, err
			}
			e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(e.fwd.port)), Fingerprint: cred.fingerprint}
		}
		made = append(made, e)
		dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
		e.Client, err = remote.Dial(dctx, e.target.String(), cred.token)
		if err != nil {
			cancel()
			return nil, e.explain(ctx, err)
		}
		info, err := e.Client.Info(dctx)
		cancel()
		if err != nil {
			return nil, e.explain(ctx, err)
		}
		kind := info.Kind
		if kind == "" {
			kind = "x11"
		}
		first := e
		out = append(out, env.Source{
			Name: "kube " + c.Namespace + "/" + name, Type: kind, Size: info.Screen,
			Remote: true, Once: true, Release: func() { e.Close() },
			Start: func(ctx context.Context, _ action.Size) (env.Env, error) {
				if first != nil {
					e := first
					first = nil
					return e, nil
				}
				return nil, fmt.Errorf("%w: pod %s/%s is started once", env.ErrClosed, c.Namespace, name)
			}})
	}
	return out, nil
}

// describePool says what the pods of a pool are doing, for a run that
// found none free.
func describePool(pods []PoolPod) string {
	if len(pods) == 0 {
		return "the pool has no pods (proctor kube pool up makes them)"
	}
	ready, claimed := 0, 0
	states := map[string]int{}
	for _, p := range pods {
		if p.Claim != "" {
			claimed++
		}
		if p.State == "Ready" {
			ready++
		} else {
			states[p.State]++
		}
	}
	msg := fmt.Sprintf("%d pods, %d Ready, %d claimed", len(pods), ready, claimed)
	if ids := poolIDs(pods); len(ids) > 0 {
		msg += " (by runs " + strings.Join(ids, ", ") + ")"
	}
	for st, n := range states {
		msg += fmt.Sprintf(", %d %s", n, st)
	}
	return msg
}

// poolRun is what a run's pool places share: the lease of its claims,
// renewed until the last place is closed.
type poolRun struct {
	c     *Cluster
	pool  string
	id    string
	lease *lease
	log   io.Writer // nil: nowhere
	mu    sync.Mutex
	live  int      // places not closed
	gone  []string // the pods it deleted
}

// deleted records a pod the run deleted, for settle.
func (pr *poolRun) deleted(pod string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.gone = append(pr.gone, pod)
}

// placeDone counts a closed place; with the last the claims' renewals
// end, and the pods the run deleted are waited for until they are gone,
// those of a lost node force-deleted (settle).
func (pr *poolRun) placeDone() {
	pr.mu.Lock()
	pr.live--
	last := pr.live == 0
	gone := slices.Clone(pr.gone)
	pr.mu.Unlock()
	if last {
		pr.lease.stop()
		ctx, cancel := context.WithTimeout(context.Background(), maxNodeWait+30*time.Second)
		defer cancel()
		pr.c.settle(ctx, gone, pr.log)
	}
}

// poolEnv is a claimed pool pod's environment: a guest pod's, whose
// Close gives the pod back to the pool instead of deleting it.
type poolEnv struct {
	*podEnv
	pr   *poolRun
	done sync.Once
}

// giveBackProbe is how long Close waits for the daemon to answer before
// it takes the pod for lost.
const giveBackProbe = 5 * time.Second

// Close ends the connection and gives the pod back, or replaces it in
// the pool when it was lost: Kubernetes says it failed or is gone, or
// its daemon does not answer. A pod made for the run beyond the pool's
// size is deleted.
func (e *poolEnv) Close() error {
	e.done.Do(func() {
		defer e.pr.placeDone()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		lost := e.Client == nil
		if !lost {
			pctx, pcancel := context.WithTimeout(ctx, giveBackProbe)
			_, err := e.Client.Info(pctx)
			pcancel()
			lost = err != nil
		}
		e.closeConn()
		c := e.pr.c
		p, err := c.Pod(ctx, e.pod)
		if err == nil && p.Annotations[annotationGrown] != "" && p.Labels[LabelClaim] == e.pr.id {
			// Made for this run beyond the pool's size: the pool
			// shrinks back.
			e.pr.deleted(e.pod)
			c.DeletePod(ctx, e.pod)
			return
		}
		if err == nil && PodFailure(p) == nil && !lost {
			c.GiveBack(ctx, e.pod, e.pr.id)
			return
		}
		if err == nil && p.Labels[LabelClaim] != e.pr.id {
			return // not this run's any more (given back by kube clean)
		}
		e.pr.deleted(e.pod)
		c.Replace(ctx, e.pr.pool, e.pod)
	})
	return nil
}
