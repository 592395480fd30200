package kube

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/proctor-eval/proctor/env/kube/kubespec"
	"github.com/proctor-eval/proctor/env/remote"
)

// A warm pool is a set of guest pods kept Ready across runs (proctor kube
// pool up): a secret, proctor-pool-NAME, holds the pool's token and TLS
// key pair (which its pods serve) and the parameters its pods are made
// with; its pods, proctor-pool-NAME-I, carry the pool's label and the
// secret as their owner. A run with pool=NAME reads the secret, claims
// Ready pods by setting the claim label to its id, each with an update
// that names the pod's resource version (so that two runs never claim
// the same pod), and gives them back at its end; a pod that was lost
// under it is deleted and another made in its place.
const (
	// LabelPool names the pool of a pool's secret and pods.
	LabelPool = "proctor.dev/pool"
	// LabelClaim is on a claimed pool pod: the id of the run that holds it.
	LabelClaim = "proctor.dev/claim"
	// annotationClaimed is when the pod was claimed (RFC 3339).
	annotationClaimed = "proctor.dev/claimed"
	// annotationSpec is on the pool's secret: the query its pods are
	// made from (image=...&memory=...), without pods and wait.
	annotationSpec = "proctor.dev/pool-spec"
	// annotationSize and annotationMax are on the pool's secret: the
	// pods it keeps (proctor kube pool up --pods), and how many it may
	// have while runs need more (--max).
	annotationSize = "proctor.dev/pool-size"
	annotationMax  = "proctor.dev/pool-max"
	// annotationGrown is on a pod a run made in the pool beyond its
	// size, claimed from the start: the run deletes it, instead of
	// giving it back, when it is done with it.
	annotationGrown = "proctor.dev/grown"
	poolPrefix      = "proctor-pool-"
)

// validPoolName refuses a pool name that cannot be in the names of its
// objects (kubespec.ValidPoolName).
func validPoolName(name string) error { return kubespec.ValidPoolName(name) }

// PoolLabels are the labels of a pool's secret and pods.
func PoolLabels(pool string) map[string]string {
	return map[string]string{LabelManagedBy: managedBy, LabelName: guestName, LabelPool: pool}
}

// PoolSelector selects a pool's secret and pods.
func PoolSelector(pool string) string { return labels.SelectorFromSet(PoolLabels(pool)).String() }

// PoolSecretName is the name of a pool's secret.
func PoolSecretName(pool string) string { return poolPrefix + pool }

// PoolSpecQuery is the part of the query of --env kube:// that a pool's
// pods are made from: q without pods, wait, connect, pool and ttl
// (the run's), encoded.
func PoolSpecQuery(q url.Values) string {
	o := url.Values{}
	for k, v := range q {
		switch k {
		case "pods", "wait", "connect", "pool", "ttl":
		default:
			o[k] = v
		}
	}
	return o.Encode()
}

// errNoPool is the error of a pool whose secret is not there.
var errNoPool = errors.New("no pool")

// poolCredentials are a pool's token and the fingerprint of the
// certificate its pods serve, as its secret holds them.
type poolCredentials struct {
	token, fingerprint string
	spec               string // annotationSpec
	// size and max are the pool's annotationSize and annotationMax
	// (0: a pool made without them, which does not grow).
	size, max int
}

// poolSecret reads a pool's secret.
func (c *Cluster) poolSecret(ctx context.Context, pool string) (*corev1.Secret, poolCredentials, error) {
	sec, err := c.Client.CoreV1().Secrets(c.Namespace).Get(ctx, PoolSecretName(pool), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, poolCredentials{}, fmt.Errorf("%w %s in namespace %s (proctor kube pool up %s makes it)", errNoPool, pool, c.Namespace, pool)
	}
	if err != nil {
		return nil, poolCredentials{}, fmt.Errorf("read the secret of pool %s: %w", pool, err)
	}
	blk, _ := pem.Decode(sec.Data["tls.crt"])
	if blk == nil || len(sec.Data["token"]) == 0 {
		return nil, poolCredentials{}, fmt.Errorf("secret %s/%s holds no token or no PEM certificate (tls.crt): remove the pool (proctor kube pool down %s) and make it again", c.Namespace, sec.Name, pool)
	}
	if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
		return nil, poolCredentials{}, fmt.Errorf("secret %s/%s: tls.crt: %w", c.Namespace, sec.Name, err)
	}
	size, _ := strconv.Atoi(sec.Annotations[annotationSize])
	max, _ := strconv.Atoi(sec.Annotations[annotationMax])
	return sec, poolCredentials{token: string(sec.Data["token"]), fingerprint: remote.Fingerprint(blk.Bytes), spec: sec.Annotations[annotationSpec],
		size: size, max: max}, nil
}

// poolPods lists a pool's pods (that are not terminating), by index.
func (c *Cluster) poolPods(ctx context.Context, pool string) ([]corev1.Pod, error) {
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: PoolSelector(pool)})
	if err != nil {
		return nil, fmt.Errorf("list the pods of pool %s in namespace %s: %w", pool, c.Namespace, err)
	}
	var out []corev1.Pod
	for _, p := range pl.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(a, b int) bool { return podIndex(&out[a]) < podIndex(&out[b]) })
	return out, nil
}

func podIndex(p *corev1.Pod) int {
	i, _ := strconv.Atoi(p.Labels[LabelIndex])
	return i
}

// poolPod is the pool's pod of index i as s asks, owned by its secret.
func poolPod(ns, pool string, i int, s Spec, sec *corev1.Secret) *corev1.Pod {
	r := &Run{ID: "pool-" + pool}
	p := r.Pod(ns, i, s, sec)
	p.Labels = PoolLabels(pool)
	p.Labels[LabelIndex] = strconv.Itoa(i)
	return p
}

// addPoolPod makes one pod of the pool at the lowest index no pod holds
// (another maker may take an index first: the next is tried).
func (c *Cluster) addPoolPod(ctx context.Context, pool string, s Spec, sec *corev1.Secret, taken map[int]bool) (*corev1.Pod, error) {
	return c.addPoolPodUpTo(ctx, pool, s, sec, taken, 0, nil)
}

// errPoolFull: every index up to the pool's max is taken.
var errPoolFull = errors.New("the pool has as many pods as it may")

// addPoolPodUpTo is addPoolPod with indices up to limit (0: any), which
// bounds the pool's pods however many runs grow it at once (each index
// is one pod's name); change (nil: none) changes the pod before it is
// made.
func (c *Cluster) addPoolPodUpTo(ctx context.Context, pool string, s Spec, sec *corev1.Secret, taken map[int]bool, limit int, change func(*corev1.Pod)) (*corev1.Pod, error) {
	for i := 1; ; i++ {
		if limit > 0 && i > limit {
			return nil, errPoolFull
		}
		if taken[i] {
			continue
		}
		def := poolPod(c.Namespace, pool, i, s, sec)
		if change != nil {
			change(def)
		}
		p, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, def, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			taken[i] = true
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create pod %s/%s%s-%d: %w", c.Namespace, poolPrefix, pool, i, err)
		}
		taken[i] = true
		return p, nil
	}
}

// PoolUp makes the pool if it is not there (its secret, with a token and
// a key pair of its own and the query its pods are made from), deletes
// its pods that failed and are not claimed, makes pods until it has
// s.Pods, or deletes unclaimed ones (the last first) down to s.Pods, and
// waits (at most s.Wait) until s.Pods are Ready. query is
// PoolSpecQuery's: a pool that exists keeps its own, and a different one
// is refused. max (0: s.Pods) bounds the pods that runs which need more
// than are free may grow the pool to. The pods runs grew it with are
// theirs: up neither counts nor deletes them. It returns how many pods
// it made and deleted.
func (c *Cluster) PoolUp(ctx context.Context, pool string, s Spec, query string, max int) (made, deleted int, err error) {
	if err := validPoolName(pool); err != nil {
		return 0, 0, err
	}
	if max == 0 {
		max = s.Pods
	}
	if max < s.Pods || max > kubespec.MaxPods {
		return 0, 0, fmt.Errorf("pool %s: at most %d pods, fewer than the %d it keeps, or more than %d", pool, max, s.Pods, kubespec.MaxPods)
	}
	bounds := map[string]string{annotationSize: strconv.Itoa(s.Pods), annotationMax: strconv.Itoa(max)}
	sec, cred, err := c.poolSecret(ctx, pool)
	switch {
	case err == nil:
		if cred.spec != query {
			return 0, 0, fmt.Errorf("pool %s exists with pods made from %q, not %q: proctor kube pool down %s first", pool, cred.spec, query, pool)
		}
		if cred.size != s.Pods || cred.max != max {
			for k, v := range bounds {
				sec.Annotations[k] = v
			}
			if sec, err = c.Client.CoreV1().Secrets(c.Namespace).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
				return 0, 0, fmt.Errorf("set the size of pool %s: %w", pool, err)
			}
		}
	case errors.Is(err, errNoPool):
		r, err := NewRun()
		if err != nil {
			return 0, 0, err
		}
		def := r.Secret(c.Namespace)
		def.Name, def.Labels = PoolSecretName(pool), PoolLabels(pool)
		def.Annotations = map[string]string{annotationSpec: query}
		maps.Copy(def.Annotations, bounds)
		if sec, err = c.Client.CoreV1().Secrets(c.Namespace).Create(ctx, def, metav1.CreateOptions{}); err != nil {
			return 0, 0, fmt.Errorf("create the secret of pool %s in namespace %s: %w", pool, c.Namespace, err)
		}
	default:
		return 0, 0, err
	}
	pods, err := c.poolPods(ctx, pool)
	if err != nil {
		return 0, 0, err
	}
	taken := map[int]bool{}
	var live []corev1.Pod
	for _, p := range pods {
		if p.Annotations[annotationGrown] != "" {
			taken[podIndex(&p)] = true
			continue // a run's, deleted when it is done with it
		}
		if f := PodFailure(&p); f != nil && f.Final && p.Labels[LabelClaim] == "" {
			if err := c.DeletePod(ctx, p.Name); err != nil {
				return made, deleted, fmt.Errorf("delete the failed pod %s (%s): %w", p.Name, f.Reason, err)
			}
			deleted++
			continue // its name is free once it is gone (addPoolPod skips it while it terminates)
		}
		taken[podIndex(&p)] = true
		live = append(live, p)
	}
	for n := len(live); n < s.Pods; n++ {
		if _, err := c.addPoolPod(ctx, pool, s, sec, taken); err != nil {
			return made, deleted, err
		}
		made++
	}
	// Shrink: unclaimed pods go, the highest index first.
	extra := len(live) - s.Pods
	for i := len(live) - 1; i >= 0 && extra > 0; i-- {
		if live[i].Labels[LabelClaim] != "" {
			continue
		}
		if err := c.DeletePod(ctx, live[i].Name); err != nil {
			return made, deleted, fmt.Errorf("delete pod %s: %w", live[i].Name, err)
		}
		deleted++
		extra--
	}
	return made, deleted, c.waitPool(ctx, pool, s.Pods, s.Wait)
}

// waitPool waits until n pods of the pool are Ready, at most limit. A pod
// that cannot become Ready fails it in Kubernetes' words.
func (c *Cluster) waitPool(ctx context.Context, pool string, n int, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last []corev1.Pod
	for {
		pods, err := c.poolPods(ctx, pool)
		if err == nil {
			last = pods
			ready := 0
			for i := range pods {
				if f := PodFailure(&pods[i]); f != nil && f.Final {
					return f
				}
				if PodReady(&pods[i]) {
					ready++
				}
			}
			if ready >= n {
				return nil
			}
		} else if ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return notReady(last, limit)
			}
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// PoolDown deletes the pool's pods (claimed ones too) and its secret, and
// returns how many of each it deleted.
func (c *Cluster) PoolDown(ctx context.Context, pool string) (pods, secrets int, err error) {
	if err := validPoolName(pool); err != nil {
		return 0, 0, err
	}
	opts := metav1.ListOptions{LabelSelector: PoolSelector(pool)}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		return 0, 0, fmt.Errorf("list the pods of pool %s in namespace %s: %w", pool, c.Namespace, err)
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
		return pods, 0, errors.Join(append(errs, fmt.Errorf("list the secrets of pool %s: %w", pool, err))...)
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

// PoolPod is one pod of a pool as proctor kube pool status shows it.
type PoolPod struct {
	Name  string
	State string // Ready, or why not (Pending, NotReady, OOMKilled, ...)
	Claim string // the id of the run that holds it; "": free
	// Claimed is when it was claimed; zero when free.
	Claimed time.Time
	Created time.Time
	Node    string
}

// PoolStatus returns the pool's pods, by index, and the query they are
// made from.
func (c *Cluster) PoolStatus(ctx context.Context, pool string) ([]PoolPod, string, error) {
	if err := validPoolName(pool); err != nil {
		return nil, "", err
	}
	_, cred, err := c.poolSecret(ctx, pool)
	if err != nil {
		return nil, "", err
	}
	pods, err := c.poolPods(ctx, pool)
	if err != nil {
		return nil, "", err
	}
	var out []PoolPod
	for i := range pods {
		p := &pods[i]
		st := "Ready"
		if !PodReady(p) {
			st = orElse(string(p.Status.Phase), "Pending")
			if f := PodFailure(p); f != nil {
				st = f.Reason
			} else if p.Status.Phase == corev1.PodRunning {
				st = "NotReady"
			}
		}
		pp := PoolPod{Name: p.Name, State: st, Claim: p.Labels[LabelClaim], Created: p.CreationTimestamp.Time, Node: p.Spec.NodeName}
		if t, err := time.Parse(time.RFC3339, p.Annotations[annotationClaimed]); err == nil && pp.Claim != "" {
			pp.Claimed = t
		}
		out = append(out, pp)
	}
	return out, cred.spec, nil
}

// Claim claims up to n Ready, free pods of the pool for the run id: each
// with an update that carries the resource version the pod was listed
// at, so that of two runs that claim a pod at once the API server takes
// one and refuses the other (a conflict: that run tries the next pod).
// It returns the pods it claimed. Each claim carries a lease of the
// default TTL (ClaimFor: of another).
func (c *Cluster) Claim(ctx context.Context, pool, id string, n int) ([]*corev1.Pod, error) {
	return c.ClaimFor(ctx, pool, id, n, DefaultTTL)
}

// ClaimFor is Claim with claims whose lease lapses ttl from now unless
// the run renews it.
func (c *Cluster) ClaimFor(ctx context.Context, pool, id string, n int, ttl time.Duration) ([]*corev1.Pod, error) {
	free, err := labels.NewRequirement(LabelClaim, selection.DoesNotExist, nil)
	if err != nil {
		return nil, err
	}
	sel := labels.SelectorFromSet(PoolLabels(pool)).Add(*free)
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list the free pods of pool %s in namespace %s: %w", pool, c.Namespace, err)
	}
	items := pl.Items
	sort.Slice(items, func(a, b int) bool { return podIndex(&items[a]) < podIndex(&items[b]) })
	var claimed []*corev1.Pod
	for i := range items {
		if len(claimed) == n {
			break
		}
		p := &items[i]
		if p.DeletionTimestamp != nil || !PodReady(p) || p.Labels[LabelClaim] != "" || PodFailure(p) != nil {
			continue
		}
		q := p.DeepCopy()
		q.Labels[LabelClaim] = id
		if q.Annotations == nil {
			q.Annotations = map[string]string{}
		}
		now := time.Now()
		q.Annotations[annotationClaimed] = now.UTC().Format(time.RFC3339)
		q.Annotations[annotationExpires] = expiry(now, ttl)
		u, err := c.Client.CoreV1().Pods(c.Namespace).Update(ctx, q, metav1.UpdateOptions{})
		switch {
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			continue // claimed, changed or deleted since it was listed
		case err != nil:
			return claimed, fmt.Errorf("claim pod %s/%s: %w", c.Namespace, p.Name, err)
		}
		claimed = append(claimed, u)
	}
	return claimed, nil
}

// GiveBack frees a pod that the run id claimed: it takes the claim and
// its lease off (again on a conflict), and does nothing to a pod that is
// gone or that another run holds. A pod the run grew the pool with is
// deleted instead: the pool shrinks back to its size. It reports whether
// it freed the pod.
func (c *Cluster) GiveBack(ctx context.Context, pod, id string) (bool, error) {
	if p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, pod, metav1.GetOptions{}); err == nil && p.Labels[LabelClaim] == id && p.Annotations[annotationGrown] != "" {
		if err := c.DeletePod(ctx, pod); err != nil {
			return false, fmt.Errorf("delete pod %s/%s, grown for run %s: %w", c.Namespace, pod, id, err)
		}
		return true, nil
	}
	freed, err := c.updateClaimed(ctx, pod, id, func(p *corev1.Pod) {
		delete(p.Labels, LabelClaim)
		delete(p.Annotations, annotationClaimed)
		delete(p.Annotations, annotationExpires)
	})
	if err != nil {
		return false, fmt.Errorf("give back pod %s/%s: %w", c.Namespace, pod, err)
	}
	return freed, nil
}

// GiveBackAll frees every pool pod that the run id claimed (id "": every
// claimed pool pod), as proctor kube clean does for a run that was
// killed, and returns how many it freed.
func (c *Cluster) GiveBackAll(ctx context.Context, id string) (int, error) {
	return c.giveBackWhere(ctx, id, func(*corev1.Pod) bool { return true })
}

// giveBackWhere gives back the pool pods claimed by run id (every run:
// "") for which give holds, and returns how many.
func (c *Cluster) giveBackWhere(ctx context.Context, id string, give func(*corev1.Pod) bool) (int, error) {
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: claimSelector(id)})
	if err != nil {
		return 0, fmt.Errorf("list the claimed pool pods in namespace %s: %w", c.Namespace, err)
	}
	n := 0
	var errs []error
	for i := range pl.Items {
		p := &pl.Items[i]
		if !give(p) {
			continue
		}
		ok, err := c.GiveBack(ctx, p.Name, p.Labels[LabelClaim])
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Replace deletes a pool pod that was lost (it failed, or its daemon no
// longer answers) and makes another in the pool in its place, free, from
// the pool's query.
func (c *Cluster) Replace(ctx context.Context, pool, pod string) (*corev1.Pod, error) {
	if err := c.DeletePod(ctx, pod); err != nil {
		return nil, fmt.Errorf("delete the lost pod %s/%s: %w", c.Namespace, pod, err)
	}
	sec, cred, err := c.poolSecret(ctx, pool)
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(c.Namespace + "?" + cred.spec)
	if err != nil {
		return nil, fmt.Errorf("the pods' query of pool %s: %w", pool, err)
	}
	// The lost pod's index is free again once it is gone; while it
	// terminates, the replacement takes another.
	taken := map[int]bool{}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: PoolSelector(pool)})
	if err != nil {
		return nil, err
	}
	for i := range pl.Items {
		taken[podIndex(&pl.Items[i])] = true
	}
	return c.addPoolPod(ctx, pool, s, sec, taken)
}

// poolIDs are the run ids that hold pods of a pool, for a message.
func poolIDs(pods []PoolPod) []string {
	var ids []string
	for _, p := range pods {
		if p.Claim != "" && !slices.Contains(ids, p.Claim) {
			ids = append(ids, p.Claim)
		}
	}
	return ids
}

// PoolBounds returns the pods the pool keeps and how many runs may grow
// it to (0, 0: a pool made without them, which does not grow).
func (c *Cluster) PoolBounds(ctx context.Context, pool string) (size, max int, err error) {
	if err := validPoolName(pool); err != nil {
		return 0, 0, err
	}
	_, cred, err := c.poolSecret(ctx, pool)
	return cred.size, cred.max, err
}

// grow makes up to n pods in the pool beyond the free ones, for the run
// id, as far as the pool's max allows (no index above it): each claimed
// from the start, with a lease of ttl, and marked grown. It waits (at
// most wait) until they are Ready and returns those that are; a pod that
// cannot become Ready is deleted and its error returned with the others.
func (c *Cluster) grow(ctx context.Context, pool, id string, n int, ttl, wait time.Duration, sec *corev1.Secret, cred poolCredentials) ([]*corev1.Pod, error) {
	if cred.max <= 0 || n <= 0 {
		return nil, nil
	}
	s, err := ParseSpec(c.Namespace + "?" + cred.spec)
	if err != nil {
		return nil, fmt.Errorf("the pods' query of pool %s: %w", pool, err)
	}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: PoolSelector(pool)})
	if err != nil {
		return nil, fmt.Errorf("list the pods of pool %s in namespace %s: %w", pool, c.Namespace, err)
	}
	taken := map[int]bool{}
	for i := range pl.Items {
		taken[podIndex(&pl.Items[i])] = true
	}
	now := time.Now()
	var made []string
	for len(made) < n {
		p, err := c.addPoolPodUpTo(ctx, pool, s, sec, taken, cred.max, func(p *corev1.Pod) {
			p.Labels[LabelClaim] = id
			p.Annotations = map[string]string{annotationGrown: "true",
				annotationClaimed: now.UTC().Format(time.RFC3339), annotationExpires: expiry(now, ttl)}
		})
		if errors.Is(err, errPoolFull) {
			break
		}
		if err != nil {
			return c.grown(ctx, made, wait, err)
		}
		made = append(made, p.Name)
	}
	return c.grown(ctx, made, wait, nil)
}

// grown waits for the pods grow made; those that do not become Ready are
// deleted, their errors joined to err.
func (c *Cluster) grown(ctx context.Context, names []string, wait time.Duration, err error) ([]*corev1.Pod, error) {
	errs := []error{err}
	var ready []*corev1.Pod
	for _, name := range names {
		p, werr := c.waitPod(ctx, name, wait)
		if werr != nil {
			c.DeletePod(context.WithoutCancel(ctx), name)
			errs = append(errs, werr)
			continue
		}
		ready = append(ready, p)
	}
	return ready, errors.Join(errs...)
}
