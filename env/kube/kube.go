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
// the scheduler's message, OOMKilled, Evicted, Deleted, NodeLost when its
// node's lease expired), as the failure of the environment, never of the
// task; a lost pod is replaced in its place, off the nodes found gone.
package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// nowhere) which run they are, once they are Ready. A place whose pod is
// lost gets a new pod when the runner starts it again, kept off the
// nodes the run found gone.
func (c *Cluster) Sources(ctx context.Context, s Spec, log io.Writer) (_ []env.Source, err error) {
	start := time.Now()
	c.SweepExpired(ctx, Sweep{Runs: true}, log)
	r, err := NewRun()
	if err != nil {
		return nil, err
	}
	pods, err := c.Make(ctx, r, s)
	if err != nil {
		return nil, err
	}
	st := &runState{c: c, run: r, spec: s, log: log, live: len(pods), next: len(pods),
		byIP: s.Connect == "ip" || s.Connect == "" && c.InCluster}
	st.lease = startLease(func(ctx context.Context, now time.Time) error { return c.renewRun(ctx, r.ID, s.TTL, now) }, s.TTL, log)
	var made []*podEnv
	defer func() {
		if err != nil {
			for _, e := range made {
				e.closeConn()
			}
			st.lease.stop()
			c.Remove(context.WithoutCancel(ctx), r.ID)
			err = fmt.Errorf("%w (the run's pods were removed)", err)
		}
	}()
	ready, err := c.WaitReady(ctx, r, len(pods), s.Wait, 250*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if log != nil {
		fmt.Fprintf(log, "kube: run %s: %d pods Ready in namespace %s in %s (if this run is killed, proctor kube clean --run %s removes them, and so does the next run once its lease of %s lapses)\n",
			r.ID, len(pods), c.Namespace, time.Since(start).Round(100*time.Millisecond), r.ID, s.TTL)
	}
	var out []env.Source
	for _, p := range pods {
		e, info, err := st.connect(ctx, ready[p.Name])
		if e != nil {
			made = append(made, e)
		}
		if err != nil {
			return nil, err
		}
		kind := info.Kind
		if kind == "" {
			kind = "x11"
		}
		pl := &podPlace{st: st, first: e, cur: e}
		out = append(out, env.Source{
			Name: "kube " + c.Namespace + "/" + p.Name, Type: kind, Size: info.Screen,
			// A pod runs elsewhere: it cannot reach this machine's
			// loopback.
			Remote: true, Release: pl.release, Start: pl.start})
	}
	return out, nil
}

// connect reaches the daemon of a Ready pod (through a port-forward, or
// by its IP) and asks it for its Info. A podEnv it returns with an error
// holds a connection to close.
func (st *runState) connect(ctx context.Context, p *corev1.Pod) (*podEnv, env.Info, error) {
	c := st.c
	e := &podEnv{st: st, pod: p.Name}
	if st.byIP {
		e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort(p.Status.PodIP, strconv.Itoa(GuestPort)), Fingerprint: st.run.Fingerprint}
	} else {
		var err error
		if e.fwd, err = c.Forward(p.Name); err != nil {
			return nil, env.Info{}, err
		}
		e.target = remote.Target{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(e.fwd.port)), Fingerprint: st.run.Fingerprint}
	}
	dctx, cancel := context.WithTimeout(ctx, provider.DialTimeout)
	defer cancel()
	var err error
	e.Client, err = remote.Dial(dctx, e.target.String(), st.run.Token)
	if err != nil {
		return e, env.Info{}, e.explain(ctx, err)
	}
	info, err := e.Client.Info(dctx)
	if err != nil {
		return e, env.Info{}, e.explain(ctx, err)
	}
	return e, info, nil
}

// runState is what the run's places share: the places still held, so
// that the last one released removes the run's secret too, the pods made
// so far (to name the next), and the nodes found gone.
type runState struct {
	c    *Cluster
	run  *Run
	spec Spec
	log  io.Writer // nil: nowhere
	byIP bool
	mu   sync.Mutex
	live int      // places not released
	next int      // the index of the last pod made
	gone []string // nodes found gone, which later pods avoid

	// lease renews the run's secret's lease; nil for a pool's run.
	lease *lease
}

// placeDone counts a released place; with the last the lease's renewals
// end, the run's remaining objects (its secret) are removed, and its
// pods are waited for until they are gone, those of a lost node
// force-deleted (settle).
func (st *runState) placeDone() {
	st.mu.Lock()
	st.live--
	last := st.live == 0
	st.mu.Unlock()
	if last {
		st.lease.stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st.c.Remove(ctx, st.run.ID)
		sctx, scancel := context.WithTimeout(context.Background(), maxNodeWait+30*time.Second)
		defer scancel()
		st.c.settleRun(sctx, st.run.ID, st.log)
	}
}

// replace makes a pod in place of a lost one, off the nodes found gone,
// waits (at most the spec's wait) until it is Ready and reaches its
// daemon. On an error it deletes the pod it made.
func (st *runState) replace(ctx context.Context, old string) (*podEnv, error) {
	c := st.c
	st.mu.Lock()
	st.next++
	i := st.next
	st.mu.Unlock()
	name := st.run.PodName(i)
	sec, err := c.Client.CoreV1().Secrets(c.Namespace).Get(ctx, st.run.SecretName(), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("a pod in place of %s/%s: the run's secret: %w", c.Namespace, old, err)
	}
	p := st.run.Pod(c.Namespace, i, st.spec, sec)
	avoidNodes(p, st.lostNodes())
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("a pod in place of %s/%s: create pod %s: %w", c.Namespace, old, name, err)
	}
	var e *podEnv
	ready, err := c.waitPod(ctx, name, st.spec.Wait)
	if err == nil {
		e, _, err = st.connect(ctx, ready)
	}
	if err != nil {
		if e != nil {
			e.closeConn()
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		c.DeletePod(dctx, name)
		cancel()
		return nil, fmt.Errorf("a pod in place of %s/%s: %w", c.Namespace, old, err)
	}
	if st.log != nil {
		fmt.Fprintf(st.log, "kube: pod %s/%s on node %s replaces pod %s/%s\n", c.Namespace, name, ready.Spec.NodeName, c.Namespace, old)
	}
	return e, nil
}

// podPlace is one place of the pool: the pod it has now, replaced when
// the runner starts the place again after its pod was lost.
type podPlace struct {
	st       *runState
	mu       sync.Mutex
	first    *podEnv // the pod made before the run, for the first start
	cur      *podEnv // the place's pod now
	released bool
}

func (pl *podPlace) start(ctx context.Context, _ action.Size) (env.Env, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.released {
		return nil, fmt.Errorf("%w: the run's pods were removed", env.ErrClosed)
	}
	if e := pl.first; e != nil {
		pl.first = nil
		return e, nil
	}
	old := pl.cur
	old.Close() // the runner closed it already
	e, err := pl.st.replace(ctx, old.pod)
	if err != nil {
		return nil, err
	}
	pl.cur = e
	return e, nil
}

// release deletes the place's pod, and with the last place the run's
// secret.
func (pl *podPlace) release() {
	pl.mu.Lock()
	if pl.released {
		pl.mu.Unlock()
		return
	}
	pl.released = true
	cur := pl.cur
	pl.mu.Unlock()
	cur.Close()
	pl.st.placeDone()
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
	// force: the pod's node is gone, and the pod is deleted at once.
	force atomic.Bool
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
// has one (or gets one within explainWait), else err. A pod that still
// looks well on a node whose kubelet stopped renewing its lease is lost
// with its node (NodeLost) once the lease expires: explain waits for
// that, or for a renewal, at most maxNodeWait.
func (e *podEnv) explain(ctx context.Context, err error) error {
	if errors.Is(err, ErrPod) || !errors.Is(err, env.ErrClosed) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxNodeWait+explainWait+10*time.Second)
	defer cancel()
	begin := time.Now()
	deadline := begin.Add(explainWait)
	var w nodeWatch
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
		if n := p.Spec.NodeName; n != "" {
			lost, wait := w.look(lctx, e.st.c, n, time.Now())
			if lost != "" {
				e.force.Store(true)
				e.st.nodeGone(n)
				return &PodError{Pod: p.Namespace + "/" + p.Name, Reason: "NodeLost", Message: lost, Final: true}
			}
			if until := time.Now().Add(wait); wait > 0 && until.After(deadline) {
				deadline = until
				if limit := begin.Add(maxNodeWait); deadline.After(limit) {
					deadline = limit
				}
			}
		}
		if time.Now().After(deadline) {
			return err
		}
		poll := 250 * time.Millisecond
		if time.Since(begin) > explainWait {
			poll = time.Second // waiting for a lease
		}
		select {
		case <-lctx.Done():
			return err
		case <-time.After(poll):
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

// Close ends the connection and deletes the pod: at once where its node
// is gone, else with its grace period.
func (e *podEnv) Close() error {
	e.once.Do(func() {
		e.closeConn()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if e.force.Load() {
			e.st.c.ForceDeletePod(ctx, e.pod)
		} else {
			e.st.c.DeletePod(ctx, e.pod)
		}
	})
	return nil
}
