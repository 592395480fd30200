// Package kube is an environment provider that runs guest daemons
// ("proctor guest") in pods of a Kubernetes cluster, on client-go:
// --env kube://[CONTEXT/]NAMESPACE?pods=N&image=IMAGE&...
//
// Each run makes its own token and TLS key pair and hands them to its
// pods in a Secret; the runner pins the certificate it made. The pods
// carry the run's label (proctor kube clean finds them by it) and the
// secret as their owner, a short grace period, no service-account token,
// a readiness probe on the daemon's port, and requests and limits. The
// runner reaches them through the API server's port-forward, or by pod IP
// when it runs in the cluster itself. A pod that cannot start or is lost
// is reported in Kubernetes' words (ImagePullBackOff, Unschedulable with
// the scheduler's message, OOMKilled, Evicted, Deleted), as the failure
// of the environment, never of the task.
package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/env"
	"github.com/proctor-eval/proctor/env/provider"
	"github.com/proctor-eval/proctor/env/remote"
)

// Provider returns the provider of guest pods on Kubernetes.
func Provider() provider.Provider { return kubeProvider{} }

type kubeProvider struct{}

func (kubeProvider) Name() string  { return "kube" }
func (kubeProvider) Usage() string { return Usage }
func (kubeProvider) Help() string {
	return "desktops in guest pods on Kubernetes (kubeconfig context, or the cluster it runs in); see docs/environments/kube.md"
}

// Sources makes the run's secret and pods, waits (at most the spec's
// wait) until every pod is Ready, and dials each daemon, so that a pod
// that cannot start is refused, in Kubernetes' words, before any task is
// scored. What it made is removed when it fails, and each pod when its
// place closes; proctor kube clean removes what a killed run left.
func (kubeProvider) Sources(ctx context.Context, arg string, o provider.Options) ([]env.Source, error) {
	s, err := ParseSpec(arg)
	if err != nil {
		return nil, err
	}
	c, err := Connect(s.Context, s.Namespace)
	if err != nil {
		return nil, err
	}
	// No more pods than the run has episodes: the others would wait.
	if o.Episodes > 0 && s.Pods > o.Episodes {
		s.Pods = o.Episodes
	}
	if s.Pool != "" {
		return c.PoolSources(ctx, s, o.Warn)
	}
	return c.Sources(ctx, s, o.Warn)
}

// Sources makes the places of spec on the cluster, and says on log (nil:
// nowhere) which run they are, once they are Ready.
func (c *Cluster) Sources(ctx context.Context, s Spec, log io.Writer) (_ []env.Source, err error) {
	start := time.Now()
	r, err := NewRun()
	if err != nil {
		return nil, err
	}
	pods, err := c.Make(ctx, r, s)
	if err != nil {
		return nil, err
	}
	st := &runState{c: c, run: r, live: len(pods)}
	var made []*podEnv
	defer func() {
		if err != nil {
			for _, e := range made {
				e.closeConn()
			}
			c.Remove(context.WithoutCancel(ctx), r.ID)
			err = fmt.Errorf("%w (the run's pods were removed)", err)
		}
	}()
	ready, err := c.WaitReady(ctx, r, len(pods), s.Wait, 250*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "kube: run %s: %d pods Ready in namespace %s in %s (if this run is killed, proctor kube clean --run %s removes them)\n",
			r.ID, len(pods), c.Namespace, time.Since(start).Round(100*time.Millisecond), r.ID)
	}
	byIP := s.Connect == "ip" || s.Connect == "" && c.InCluster
	var out []env.Source
	for _, p := range pods {
		name := p.Name
		e := &podEnv{st: st, pod: name}
		if byIP {
			e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort(ready[name].Status.PodIP, strconv.Itoa(GuestPort)), Fingerprint: r.Fingerprint}
		} else {
			if e.fwd, err = c.Forward(name); err != nil {
				return nil, err
			}
			e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(e.fwd.port)), Fingerprint: r.Fingerprint}
		}
		made = append(made, e)
		dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
		e.Client, err = remote.Dial(dctx, e.target.String(), r.Token)
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
			// A pod runs elsewhere: it cannot reach this machine's
			// loopback. It is made once: a lost pod leaves the pool.
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

// runState is what the run's places share: the pods still live, so that
// the last one closed removes the secret too.
type runState struct {
	c    *Cluster
	run  *Run
	mu   sync.Mutex
	live int
}

// release deletes a closed place's pod, and with the last the run's
// secret.
func (st *runState) release(pod string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st.c.DeletePod(ctx, pod)
	st.mu.Lock()
	st.live--
	last := st.live == 0
	st.mu.Unlock()
	if last {
		st.c.Remove(ctx, st.run.ID)
	}
}

// podEnv is the environment a guest pod serves: the daemon's client, the
// forward it goes through, and the pod it names in errors.
type podEnv struct {
	*remote.Client
	st     *runState
	pod    string
	target remote.Target
	fwd    *forward // nil: reached by pod IP
	once   sync.Once
}

// Info asks the daemon; when it cannot be reached, the error says what
// became of the pod (deleted, evicted, killed for memory), if anything.
func (e *podEnv) Info(ctx context.Context) (env.Info, error) {
	info, err := e.Client.Info(ctx)
	if err != nil {
		err = e.explain(ctx, err)
	}
	return info, err
}

// explainWait is how long explain waits for a pod's status to show why
// its daemon cannot be reached: a kubelet reports a container's end a
// moment after the connection to it breaks.
const explainWait = 5 * time.Second

// explain returns the pod's failure in Kubernetes' words when the pod
// has one (or gets one within explainWait), else err.
func (e *podEnv) explain(ctx context.Context, err error) error {
	if errors.Is(err, ErrPod) || !errors.Is(err, env.ErrClosed) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainWait+10*time.Second)
	defer cancel()
	deadline := time.Now().Add(explainWait)
	for {
		p, perr := e.st.c.Pod(lctx, e.pod)
		var pe *PodError
		switch {
		case errors.As(perr, &pe):
			return pe
		case perr != nil:
			return err
		}
		if f := PodFailure(p); f != nil {
			return f
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-lctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (e *podEnv) closeConn() {
	if e.Client != nil {
		e.Client.Close()
	}
	if e.fwd != nil {
		e.fwd.Close()
	}
}

// Close ends the connection and deletes the pod.
func (e *podEnv) Close() error {
	e.once.Do(func() {
		e.closeConn()
		e.st.release(e.pod)
	})
	return nil
}
