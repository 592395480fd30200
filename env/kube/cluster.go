package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a client of the cluster an --env kube:// value names.
type Cluster struct {
	Client    kubernetes.Interface
	Config    *rest.Config // nil with a fake client
	Namespace string
	// InCluster means this process runs in a pod of that cluster.
	InCluster bool
}

// Connect returns a client of the cluster of a kubeconfig context ("":
// the current one) from the usual places ($KUBECONFIG, ~/.kube/config),
// or, with no context and no kubeconfig, of the cluster this process
// runs in. namespace "" is the context's namespace, else "default".
func Connect(contextName, namespace string) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	var cfg *rest.Config
	inCluster := false
	if contextName == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" && !kubeconfigExists(rules) {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("the cluster this pod runs in: %w", err)
		}
		cfg, inCluster = c, true
		if namespace == "" {
			if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
				namespace = strings.TrimSpace(string(b))
			}
		}
	} else {
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: contextName})
		c, err := cc.ClientConfig()
		if err != nil {
			if clientcmd.IsEmptyConfig(err) {
				return nil, errors.New("no kubeconfig: set $KUBECONFIG or write ~/.kube/config (or run in a pod of the cluster)")
			}
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		cfg = c
		if namespace == "" {
			if ns, _, err := cc.Namespace(); err == nil {
				namespace = ns
			}
		}
	}
	if namespace == "" {
		namespace = "default"
	}
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Client: client, Config: cfg, Namespace: namespace, InCluster: inCluster}, nil
}

func kubeconfigExists(rules *clientcmd.ClientConfigLoadingRules) bool {
	for _, p := range rules.GetLoadingPrecedence() {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// Make creates the run's secret, with a lease of the spec's TTL, and n
// pods as spec asks. On an error it removes what it made.
func (c *Cluster) Make(ctx context.Context, r *Run, s Spec) ([]*corev1.Pod, error) {
	def := r.Secret(c.Namespace)
	def.Annotations = map[string]string{annotationExpires: expiry(time.Now(), s.TTL)}
	sec, err := c.Client.CoreV1().Secrets(c.Namespace).Create(ctx, def, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create the run's secret in namespace %s: %w", c.Namespace, err)
	}
	var pods []*corev1.Pod
	for i := 1; i <= s.Pods; i++ {
		p, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, r.Pod(c.Namespace, i, s, sec), metav1.CreateOptions{})
		if err != nil {
			c.Remove(context.WithoutCancel(ctx), r.ID)
			return nil, fmt.Errorf("create pod %s/%s: %w", c.Namespace, r.PodName(i), err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// WaitReady waits until every pod of the run is Ready, for at most
// limit, and returns them by name. It fails at once when a pod cannot
// become Ready (its image cannot be pulled, it ended, it was deleted or
// evicted), and at the limit with what each pod that is not Ready is
// waiting for (the scheduler's message, the image pull's). Errors are
// PodErrors where a pod's state explains them.
func (c *Cluster) WaitReady(ctx context.Context, r *Run, n int, limit time.Duration, poll time.Duration) (map[string]*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last []corev1.Pod
	for {
		list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: r.Selector()})
		switch {
		case err == nil:
			last = list.Items
			ready := map[string]*corev1.Pod{}
			for i := range list.Items {
				p := &list.Items[i]
				if f := PodFailure(p); f != nil && f.Final {
					return nil, f
				}
				if PodReady(p) {
					ready[p.Name] = p
				}
			}
			if len(ready) == n {
				return ready, nil
			}
			if len(list.Items) < n {
				return nil, fmt.Errorf("%d of the run's %d pods are gone from namespace %s (deleted)", n-len(list.Items), n, c.Namespace)
			}
		case ctx.Err() == nil:
			return nil, fmt.Errorf("list the run's pods: %w", err)
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return nil, notReady(last, limit)
			}
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// notReady says, after limit, why pods are not Ready: the first pod's
// reason (an Unschedulable one in the scheduler's words) as a PodError,
// with the count of the others.
func notReady(pods []corev1.Pod, limit time.Duration) error {
	sort.Slice(pods, func(a, b int) bool { return pods[a].Name < pods[b].Name })
	var waiting []string
	var first *PodError
	for i := range pods {
		p := &pods[i]
		if PodReady(p) {
			continue
		}
		f := PodFailure(p)
		if f == nil {
			f = &PodError{Pod: p.Namespace + "/" + p.Name, Reason: "NotReady", Message: pending(p)}
		}
		if first == nil {
			first = f
		}
		waiting = append(waiting, p.Name)
	}
	if first == nil {
		return fmt.Errorf("the pods were not Ready within %s", limit)
	}
	first.Final = true
	others := ""
	if len(waiting) > 1 {
		others = fmt.Sprintf(" (and %d more pods not Ready)", len(waiting)-1)
	}
	first.Message = fmt.Sprintf("not Ready within %s%s: %s", limit, others, first.Message)
	return first
}

// Pod returns a pod's current state; a pod that is gone is a PodError
// with the reason Deleted.
func (c *Cluster) Pod(ctx context.Context, name string) (*corev1.Pod, error) {
	p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &PodError{Pod: c.Namespace + "/" + name, Reason: "Deleted", Message: "the pod is gone from the cluster", Final: true}
	}
	return p, err
}

// DeletePod deletes one pod of a run, with its short grace period.
func (c *Cluster) DeletePod(ctx context.Context, name string) error {
	err := c.Client.CoreV1().Pods(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(gracePeriod))})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Remove deletes every pod and secret of a run (id "": of every run) in
// the namespace, and returns how many of each it deleted. Pods go
// first: no garbage collector is needed to remove them.
func (c *Cluster) Remove(ctx context.Context, id string) (pods, secrets int, err error) {
	sel := ManagedSelector()
	if id != "" {
		sel = (&Run{ID: id}).Selector()
	}
	opts := metav1.ListOptions{LabelSelector: sel}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		return 0, 0, fmt.Errorf("list pods in namespace %s: %w", c.Namespace, err)
	}
	var errs []error
	for _, p := range pl.Items {
		if err := c.DeletePod(ctx, p.Name); err != nil {
			errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
		} else {
			pods++
		}
	}
	sl, err := c.Client.CoreV1().Secrets(c.Namespace).List(ctx, opts)
	if err != nil {
		return pods, 0, errors.Join(append(errs, fmt.Errorf("list secrets in namespace %s: %w", c.Namespace, err))...)
	}
	for _, s := range sl.Items {
		err := c.Client.CoreV1().Secrets(c.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
		switch {
		case err == nil:
			secrets++
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("delete secret %s: %w", s.Name, err))
		}
	}
	return pods, secrets, errors.Join(errs...)
}
