package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// poolCluster is a cluster on client-go's fake clientset that does what
// an API server and a kubelet do and the fake does not: objects get a UID
// and a resource version, an update that names a resource version other
// than the stored one is refused with a conflict, and a pod made is
// Ready at once (unless notReady says otherwise of its name).
func poolCluster(t *testing.T, notReady func(name string) bool) (*Cluster, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	var mu sync.Mutex
	rv := 0
	next := func() string { rv++; return strconv.Itoa(rv) }
	cs.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		p := a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod).DeepCopy()
		cur, err := cs.Tracker().Get(podsGVR, p.Namespace, p.Name)
		if err != nil {
			return true, nil, err
		}
		if got := cur.(*corev1.Pod).ResourceVersion; p.ResourceVersion != got {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, p.Name,
				fmt.Errorf("the object has been modified (version %s, stored %s)", p.ResourceVersion, got))
		}
		p.ResourceVersion = next()
		if err := cs.Tracker().Update(podsGVR, p, p.Namespace); err != nil {
			return true, nil, err
		}
		return true, p, nil
	})
	cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		o := a.(k8stesting.CreateAction).GetObject()
		m := o.(metav1.Object)
		m.SetUID(types.UID("uid-" + next()))
		m.SetResourceVersion(next())
		m.SetCreationTimestamp(metav1.Now())
		if p, ok := o.(*corev1.Pod); ok && (notReady == nil || !notReady(p.Name)) {
			p.Spec.NodeName = "node-1"
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		}
		return false, nil, nil
	})
	return &Cluster{Client: cs, Namespace: "evals"}, cs
}

func poolSpec(t *testing.T, query string) Spec {
	t.Helper()
	s, err := ParseSpec("evals?" + query)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// poolPodNames lists the pool's pods as NAME or NAME=RUN when claimed.
func poolPodNames(t *testing.T, c *Cluster, pool string) []string {
	t.Helper()
	pods, err := c.poolPods(context.Background(), pool)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods {
		n := p.Name
		if id := p.Labels[LabelClaim]; id != "" {
			n += "=" + id
		}
		out = append(out, n)
	}
	return out
}

func TestPoolUpDown(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	s := poolSpec(t, "pods=3&wait=2s&memory=512Mi")
	made, deleted, err := c.PoolUp(ctx, "warm", s, "memory=512Mi", 0)
	if err != nil || made != 3 || deleted != 0 {
		t.Fatalf("PoolUp = %d made, %d deleted, %v; want 3, 0", made, deleted, err)
	}
	if got, want := poolPodNames(t, c, "warm"), []string{"proctor-pool-warm-1", "proctor-pool-warm-2", "proctor-pool-warm-3"}; !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
	sec, err := cs.CoreV1().Secrets("evals").Get(ctx, "proctor-pool-warm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Labels[LabelPool] != "warm" || sec.Annotations[annotationSpec] != "memory=512Mi" || len(sec.Data["token"]) == 0 || len(sec.Data["tls.key"]) == 0 {
		t.Errorf("the pool's secret: labels %v, annotations %v, keys %d", sec.Labels, sec.Annotations, len(sec.Data))
	}
	p, err := cs.CoreV1().Pods("evals").Get(ctx, "proctor-pool-warm-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels[LabelPool] != "warm" || p.Labels[LabelRun] != "" || p.Labels[LabelIndex] != "2" ||
		p.Spec.Volumes[0].Secret.SecretName != "proctor-pool-warm" || p.OwnerReferences[0].Name != "proctor-pool-warm" ||
		p.Spec.Containers[0].Resources.Requests.Memory().String() != "512Mi" {
		t.Errorf("pool pod: labels %v, volume %v, owner %v", p.Labels, p.Spec.Volumes[0].Secret, p.OwnerReferences)
	}

	// Up again: nothing to do; a failed free pod is replaced; fewer pods
	// delete the last free ones; a claimed pod stays.
	if made, deleted, err := c.PoolUp(ctx, "warm", s, "memory=512Mi", 0); err != nil || made != 0 || deleted != 0 {
		t.Errorf("PoolUp of a full pool = %d made, %d deleted, %v", made, deleted, err)
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}
	if _, err := cs.CoreV1().Pods("evals").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if made, deleted, err := c.PoolUp(ctx, "warm", s, "memory=512Mi", 0); err != nil || made != 1 || deleted != 1 {
		t.Errorf("PoolUp with a failed pod = %d made, %d deleted, %v; want 1, 1", made, deleted, err)
	}
	if _, err := c.Claim(ctx, "warm", "run3", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GiveBack(ctx, "proctor-pool-warm-1", "run3"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GiveBack(ctx, "proctor-pool-warm-2", "run3"); err != nil {
		t.Fatal(err)
	}
	s1 := poolSpec(t, "pods=1&wait=2s")
	if made, deleted, err := c.PoolUp(ctx, "warm", s1, "memory=512Mi", 0); err != nil || made != 0 || deleted != 2 {
		t.Errorf("PoolUp down to 1 = %d made, %d deleted, %v; want 0, 2", made, deleted, err)
	}
	if got, want := poolPodNames(t, c, "warm"), []string{"proctor-pool-warm-3=run3"}; !slices.Equal(got, want) {
		t.Errorf("after shrinking: %v, want %v (the claimed pod stays)", got, want)
	}
	if _, _, err := c.PoolUp(ctx, "warm", s, "memory=1Gi", 0); err == nil || !strings.Contains(err.Error(), `pool warm exists with pods made from "memory=512Mi", not "memory=1Gi"`) {
		t.Errorf("PoolUp with other parameters: %v", err)
	}

	pods, secrets, err := c.PoolDown(ctx, "warm")
	if err != nil || pods != 1 || secrets != 1 {
		t.Errorf("PoolDown = %d pods, %d secrets, %v", pods, secrets, err)
	}
	pl, _ := cs.CoreV1().Pods("evals").List(ctx, metav1.ListOptions{LabelSelector: PoolSelector("warm")})
	sl, _ := cs.CoreV1().Secrets("evals").List(ctx, metav1.ListOptions{LabelSelector: PoolSelector("warm")})
	if len(pl.Items)+len(sl.Items) != 0 {
		t.Errorf("PoolDown left %d pods and %d secrets", len(pl.Items), len(sl.Items))
	}
	if _, _, err := c.PoolStatus(ctx, "warm"); err == nil || !strings.Contains(err.Error(), "no pool warm in namespace evals (proctor kube pool up warm makes it)") {
		t.Errorf("status of a pool that is gone: %v", err)
	}
}

func TestPoolUpNotReady(t *testing.T) {
	c, _ := poolCluster(t, func(name string) bool { return name == "proctor-pool-slow-2" })
	_, _, err := c.PoolUp(context.Background(), "slow", poolSpec(t, "pods=2&wait=300ms"), "", 0)
	var pe *PodError
	if !errors.As(err, &pe) || pe.Pod != "evals/proctor-pool-slow-2" || !strings.Contains(pe.Message, "not Ready within 300ms") {
		t.Errorf("PoolUp with a pod that is not Ready: %v", err)
	}
}

func TestPoolManagedApart(t *testing.T) {
	c, _ := poolCluster(t, nil)
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=2&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	r, err := NewRun()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Make(ctx, r, poolSpec(t, "pods=1")); err != nil {
		t.Fatal(err)
	}
	// kube clean --all removes every run's objects, and not the pools'.
	pods, secrets, err := c.Remove(ctx, "")
	if err != nil || pods != 1 || secrets != 1 {
		t.Errorf("Remove of every run = %d pods, %d secrets, %v; want the run's 1 and 1", pods, secrets, err)
	}
	if got := poolPodNames(t, c, "warm"); len(got) != 2 {
		t.Errorf("the pool has %v after kube clean --all", got)
	}
}

func TestClaim(t *testing.T) {
	c, _ := poolCluster(t, func(name string) bool { return name == "proctor-pool-warm-4" })
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=3&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	// A fourth pod that is not Ready is never claimed.
	if _, err := c.addPoolPod(ctx, "warm", poolSpec(t, ""), nil, map[int]bool{1: true, 2: true, 3: true}); err != nil {
		t.Fatal(err)
	}
	claim := func(id string, n int) []string {
		t.Helper()
		pods, err := c.Claim(ctx, "warm", id, n)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pods {
			if p.Labels[LabelClaim] != id || p.Annotations[annotationClaimed] == "" {
				t.Errorf("claimed pod %s: labels %v, annotations %v", p.Name, p.Labels, p.Annotations)
			}
			names = append(names, strings.TrimPrefix(p.Name, "proctor-pool-warm-"))
		}
		return names
	}
	for _, tc := range []struct {
		id   string
		n    int
		want []string
	}{
		{"aaaa", 2, []string{"1", "2"}},
		{"bbbb", 2, []string{"3"}},
		{"cccc", 1, nil},
	} {
		if got := claim(tc.id, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("run %s claims %d: %v, want %v", tc.id, tc.n, got, tc.want)
		}
	}
	// Only the run that holds a pod gives it back.
	if ok, err := c.GiveBack(ctx, "proctor-pool-warm-1", "bbbb"); ok || err != nil {
		t.Errorf("run bbbb gave back aaaa's pod: %v %v", ok, err)
	}
	if ok, err := c.GiveBack(ctx, "proctor-pool-warm-1", "aaaa"); !ok || err != nil {
		t.Errorf("run aaaa did not give back its pod: %v %v", ok, err)
	}
	if ok, err := c.GiveBack(ctx, "proctor-pool-gone-1", "aaaa"); ok || err != nil {
		t.Errorf("giving back a pod that is gone: %v %v", ok, err)
	}
	if got := claim("cccc", 2); !slices.Equal(got, []string{"1"}) {
		t.Errorf("run cccc claims %v after aaaa gave pod 1 back", got)
	}
	st, _, err := c.PoolStatus(ctx, "warm")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, p := range st {
		rows = append(rows, fmt.Sprintf("%s %s %s %v", p.Name, p.State, p.Claim, !p.Claimed.IsZero()))
	}
	want := []string{"proctor-pool-warm-1 Ready cccc true", "proctor-pool-warm-2 Ready aaaa true", "proctor-pool-warm-3 Ready bbbb true", "proctor-pool-warm-4 Pending  false"}
	if !slices.Equal(rows, want) {
		t.Errorf("status:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if got := describePool(st); got != "4 pods, 3 Ready, 3 claimed (by runs cccc, aaaa, bbbb), 1 Pending" {
		t.Errorf("describePool = %q", got)
	}
	// kube clean --run gives back the pods of one run, --all of every run.
	if n, err := c.GiveBackAll(ctx, "aaaa"); n != 1 || err != nil {
		t.Errorf("GiveBackAll(aaaa) = %d, %v", n, err)
	}
	if n, err := c.GiveBackAll(ctx, ""); n != 2 || err != nil {
		t.Errorf("GiveBackAll() = %d, %v", n, err)
	}
	if got := poolPodNames(t, c, "warm"); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "=") }) {
		t.Errorf("claims left: %v", got)
	}
}

// TestClaimConflict: a pod claimed by another run between the list and
// the update is refused by its resource version, and the next is taken.
func TestClaimConflict(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=2&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	// Another run's claim of pod 1 lands between this run's list and
	// its update.
	first := true
	cs.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if first {
			first = false
			o, err := cs.Tracker().Get(podsGVR, "evals", "proctor-pool-warm-1")
			if err != nil {
				return true, nil, err
			}
			p := o.(*corev1.Pod).DeepCopy()
			p.Labels[LabelClaim] = "other"
			p.ResourceVersion = "9999"
			if err := cs.Tracker().Update(podsGVR, p, "evals"); err != nil {
				return true, nil, err
			}
		}
		return false, nil, nil
	})
	pods, err := c.Claim(ctx, "warm", "mine", 1)
	if err != nil || len(pods) != 1 || pods[0].Name != "proctor-pool-warm-2" {
		t.Fatalf("Claim = %v, %v; want pod 2 (pod 1 was claimed under it)", pods, err)
	}
	if got, want := poolPodNames(t, c, "warm"), []string{"proctor-pool-warm-1=other", "proctor-pool-warm-2=mine"}; !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
}

// TestClaimConcurrent: runs that claim at once never share a pod, and
// together claim every free one.
func TestClaimConcurrent(t *testing.T) {
	c, _ := poolCluster(t, nil)
	ctx := context.Background()
	const pods, runs = 12, 8
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods="+strconv.Itoa(pods)+"&wait=2s"), "", 0); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	holder := map[string]string{}
	var wg sync.WaitGroup
	for r := range runs {
		wg.Go(func() {
			id := fmt.Sprintf("run%d", r)
			// Each run tries until it has 2 or the pool has none free.
			var got []*corev1.Pod
			for len(got) < 2 {
				more, err := c.Claim(ctx, "warm", id, 2-len(got))
				if err != nil {
					t.Error(err)
					return
				}
				got = append(got, more...)
				if len(more) == 0 {
					st, _, _ := c.PoolStatus(ctx, "warm")
					free := 0
					for _, p := range st {
						if p.Claim == "" {
							free++
						}
					}
					if free == 0 {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range got {
				if h, ok := holder[p.Name]; ok {
					t.Errorf("pod %s claimed by %s and %s", p.Name, h, id)
				}
				holder[p.Name] = id
			}
		})
	}
	wg.Wait()
	if len(holder) != pods {
		t.Errorf("%d pods claimed, want all %d", len(holder), pods)
	}
	for _, n := range poolPodNames(t, c, "warm") {
		name, id, _ := strings.Cut(n, "=")
		if holder[name] != id {
			t.Errorf("pod %s is held by %q on the cluster, by %q as its claimer saw", name, id, holder[name])
		}
	}
}

func TestReplace(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=3&wait=2s&image=reg.example/guest:2"), "image=reg.example%2Fguest%3A2", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(ctx, "warm", "run1", 3); err != nil {
		t.Fatal(err)
	}
	p, err := c.Replace(ctx, "warm", "proctor-pool-warm-2")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "proctor-pool-warm-2" || p.Labels[LabelClaim] != "" || p.Spec.Containers[0].Image != "reg.example/guest:2" {
		t.Errorf("replacement %s: labels %v, image %s", p.Name, p.Labels, p.Spec.Containers[0].Image)
	}
	if got, want := poolPodNames(t, c, "warm"), []string{"proctor-pool-warm-1=run1", "proctor-pool-warm-2", "proctor-pool-warm-3=run1"}; !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
	// While a deleted pod terminates, its replacement takes a free index.
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, nil // the pod stays, terminating
	})
	p, err = c.Replace(ctx, "warm", "proctor-pool-warm-3")
	if err != nil || p.Name != "proctor-pool-warm-4" {
		t.Errorf("replacement of a terminating pod: %v, %v", p, err)
	}
}

func TestParseSpecPool(t *testing.T) {
	for _, tc := range []struct{ arg, pool, err string }{
		{"evals?pool=warm&pods=4", "warm", ""},
		{"evals?pool=warm&pods=4&wait=10s&connect=forward", "warm", ""},
		{"evals?pool=Warm", "", "pool=Warm: a pool's name is a DNS label"},
		{"evals?pool=" + strings.Repeat("w", 41), "", "at most 40 characters"},
		{"evals?pool=warm&image=reg.example/g:1", "", "image with pool=warm: the pool's pods were made with their own (proctor kube pool status warm)"},
		{"evals?pool=warm&memory=2Gi", "", "memory with pool=warm"},
	} {
		s, err := ParseSpec(tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSpec(%q) = %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || s.Pool != tc.pool {
			t.Errorf("ParseSpec(%q) = pool %q, %v", tc.arg, s.Pool, err)
		}
	}
}

func TestPoolSpecQuery(t *testing.T) {
	s, err := ParseSpec("evals?pods=3&wait=9s&connect=ip&image=reg.example/g:1&memory=2Gi&node=a=b")
	if err != nil {
		t.Fatal(err)
	}
	q := PoolSpecQuery(map[string][]string{"pods": {"3"}, "wait": {"9s"}, "connect": {"ip"}, "ttl": {"1m"}, "image": {"reg.example/g:1"}, "memory": {"2Gi"}, "node": {"a=b"}})
	if q != "image=reg.example%2Fg%3A1&memory=2Gi&node=a%3Db" {
		t.Errorf("PoolSpecQuery = %q", q)
	}
	back, err := ParseSpec("evals?" + q)
	if err != nil || back.Image != s.Image || back.Memory.Cmp(s.Memory) != 0 || back.NodeSelector["a"] != "b" {
		t.Errorf("the query does not give back the pods' parameters: %+v %v", back, err)
	}
}

// TestPoolGrows: a run that finds fewer free pods than it can use grows
// the pool with pods of its own, up to the pool's max however many runs
// grow it; those pods are deleted when given back, so that the pool
// shrinks back to its size; pool up leaves them to their runs.
func TestPoolGrows(t *testing.T) {
	c, cs := poolCluster(t, nil)
	ctx := context.Background()
	s := poolSpec(t, "pods=2&wait=2s")
	if _, _, err := c.PoolUp(ctx, "warm", s, "", 1); err == nil || !strings.Contains(err.Error(), "at most 1 pods, fewer than the 2 it keeps") {
		t.Errorf("PoolUp with max below its size: %v", err)
	}
	if _, _, err := c.PoolUp(ctx, "warm", s, "", 4); err != nil {
		t.Fatal(err)
	}
	if size, max, err := c.PoolBounds(ctx, "warm"); size != 2 || max != 4 || err != nil {
		t.Errorf("PoolBounds = %d, %d, %v; want 2, 4", size, max, err)
	}
	if _, err := c.Claim(ctx, "warm", "other", 1); err != nil {
		t.Fatal(err)
	}
	sec, cred, err := c.poolSecret(ctx, "warm")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ClaimFor(ctx, "warm", "run1", 3, time.Minute)
	if err != nil || len(got) != 1 {
		t.Fatalf("run1 claimed %d pods, %v; want the 1 free", len(got), err)
	}
	grown, err := c.grow(ctx, "warm", "run1", 2, time.Minute, 2*time.Second, sec, cred)
	if err != nil || len(grown) != 2 {
		t.Fatalf("grow for run1 = %d pods, %v; want 2", len(grown), err)
	}
	for _, p := range grown {
		if p.Labels[LabelClaim] != "run1" || p.Annotations[annotationGrown] == "" || p.Annotations[annotationExpires] == "" || !PodReady(p) {
			t.Errorf("grown pod %s: labels %v, annotations %v", p.Name, p.Labels, p.Annotations)
		}
	}
	// The pool is at its max: another run grows it no more.
	if more, err := c.grow(ctx, "warm", "run2", 1, time.Minute, 2*time.Second, sec, cred); len(more) != 0 || err != nil {
		t.Errorf("grow past the max = %d pods, %v", len(more), err)
	}
	want := []string{"proctor-pool-warm-1=other", "proctor-pool-warm-2=run1", "proctor-pool-warm-3=run1", "proctor-pool-warm-4=run1"}
	if got := poolPodNames(t, c, "warm"); !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
	// pool up counts the pool's own pods only.
	if made, deleted, err := c.PoolUp(ctx, "warm", s, "", 4); made != 0 || deleted != 0 || err != nil {
		t.Errorf("PoolUp of a grown pool = %d made, %d deleted, %v", made, deleted, err)
	}
	if ok, err := c.GiveBack(ctx, "proctor-pool-warm-3", "run1"); !ok || err != nil {
		t.Errorf("GiveBack of a grown pod = %v, %v", ok, err)
	}
	if n, err := c.GiveBackAll(ctx, "run1"); n != 2 || err != nil {
		t.Errorf("GiveBackAll(run1) = %d, %v", n, err)
	}
	want = []string{"proctor-pool-warm-1=other", "proctor-pool-warm-2"}
	if got := poolPodNames(t, c, "warm"); !slices.Equal(got, want) {
		t.Errorf("after run1 gave its pods back: %v, want %v", got, want)
	}
	// A pool made without bounds does not grow.
	sec.Annotations = map[string]string{annotationSpec: ""}
	if _, err := cs.CoreV1().Secrets("evals").Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, cred, err = c.poolSecret(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if more, err := c.grow(ctx, "warm", "run3", 1, time.Minute, 2*time.Second, sec, cred); len(more) != 0 || err != nil {
		t.Errorf("grow of a pool without bounds = %d pods, %v", len(more), err)
	}
}

// TestPoolGrowNotReady: a pod made for a run that cannot become Ready is
// deleted, and said.
func TestPoolGrowNotReady(t *testing.T) {
	c, _ := poolCluster(t, func(name string) bool { return name == "proctor-pool-warm-2" })
	ctx := context.Background()
	if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=1&wait=2s"), "", 2); err != nil {
		t.Fatal(err)
	}
	sec, cred, err := c.poolSecret(ctx, "warm")
	if err != nil {
		t.Fatal(err)
	}
	grown, err := c.grow(ctx, "warm", "run1", 1, time.Minute, 300*time.Millisecond, sec, cred)
	var pe *PodError
	if len(grown) != 0 || !errors.As(err, &pe) || pe.Pod != "evals/proctor-pool-warm-2" || !strings.Contains(pe.Message, "not Ready within 300ms") {
		t.Errorf("grow with a pod that is not Ready = %d pods, %v", len(grown), err)
	}
	if got, want := poolPodNames(t, c, "warm"), []string{"proctor-pool-warm-1"}; !slices.Equal(got, want) {
		t.Errorf("pods %v, want %v", got, want)
	}
}
