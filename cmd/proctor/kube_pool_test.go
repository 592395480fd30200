package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/proctor-eval/proctor/env/kube"
)

// poolState runs proctor kube pool status: its first line, and its
// table's rows as "POD STATE CLAIMED-BY".
func poolState(t *testing.T, pool string) (head string, rows []string) {
	t.Helper()
	out, errOut, code := runCLI(t, "", "kube", "pool", "status", pool, "--namespace", "default")
	if code != 0 {
		t.Fatalf("kube pool status exited %d: %s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines[min(2, len(lines)):] {
		f := strings.Fields(l)
		rows = append(rows, f[0]+" "+f[1]+" "+f[2])
	}
	return lines[0], rows
}

// TestKubeBedPool keeps a warm pool on the test bed: pool up makes three
// Ready pods, a run with pool= runs on them and makes no pod, and gives
// them back; a pod deleted under a run is replaced in the pool; runs
// that claim at once never share a pod; pool down leaves nothing with
// the pool's label.
func TestKubeBedPool(t *testing.T) {
	_, c := bedClient(t)
	ctx := context.Background()
	out, errOut, code := runCLI(t, "", "kube", "pool", "up", "warm", "--pods", "3", "--wait", "90s", "--namespace", "default")
	t.Logf("kube pool up:\n%s%s", out, errOut)
	if code != 0 || !strings.Contains(out, "pool warm in namespace default: 3 pods Ready (3 made, 0 deleted)") {
		t.Fatalf("kube pool up exited %d", code)
	}
	head, rows := poolState(t, "warm")
	t.Logf("kube pool status: %s\n%s", head, strings.Join(rows, "\n"))
	if !strings.HasPrefix(head, "pool warm in namespace default: 3 pods, 3 Ready, 3 free, 0 claimed") || len(rows) != 3 {
		t.Fatalf("status does not show 3 free Ready pods")
	}

	t.Run("a run on the pool", func(t *testing.T) {
		before, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.Client.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		added := make(chan []string, 1)
		go func() {
			var names []string
			for ev := range w.ResultChan() {
				if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
					names = append(names, p.Name)
				}
			}
			added <- names
		}()
		dir := filepath.Join(t.TempDir(), "run")
		out, errOut, code := runCLI(t, "", "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pool=warm&pods=3&wait=30s",
			"--filter", "^(shell-write|count-lines)$", "--repeat", "3", "--parallel", "3", "--out", dir)
		w.Stop()
		made := <-added
		after, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("proctor run:\n%s%s", out, errOut)
		if code != 0 {
			t.Fatalf("the run on the pool exited %d", code)
		}
		if !strings.Contains(errOut, "claimed 3 Ready pods of pool warm in namespace default") {
			t.Errorf("the run does not say it claimed the pool's 3 pods")
		}
		t.Logf("pods in namespace default: %d before the run, %d after; made during it: %v", len(before.Items), len(after.Items), made)
		if len(made) != 0 || len(before.Items) != len(after.Items) {
			t.Errorf("the run on the pool made pods %v (%d pods before, %d after)", made, len(before.Items), len(after.Items))
		}
		rep, _, code := runCLI(t, "", "report", dir)
		if code != 0 || !strings.Contains(rep, "episodes                     6") || !strings.Contains(rep, "success rate                 100.0%") {
			t.Errorf("the report of the run on the pool:\n%s", rep)
		}
		head, rows := poolState(t, "warm")
		t.Logf("kube pool status after the run: %s\n%s", head, strings.Join(rows, "\n"))
		if !strings.HasPrefix(head, "pool warm in namespace default: 3 pods, 3 Ready, 3 free, 0 claimed") {
			t.Errorf("the run did not give the pods back")
		}
		if p, s := leftovers(t, c); p != 0 || s != 0 {
			t.Errorf("the run left %d pods and %d secrets of its own", p, s)
		}
	})

	t.Run("a pool pod deleted under a run", func(t *testing.T) {
		cmd, sc := startProctor(t, "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pool=warm&pods=2&wait=30s",
			"--filter", "^(shell-write|count-lines)$", "--repeat", "4", "--parallel", "2", "--out", filepath.Join(t.TempDir(), "run"))
		var lines []string
		id := readyRun(t, sc, &lines)
		claimed, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelClaim + "=" + id})
		if err != nil || len(claimed.Items) != 2 {
			t.Fatalf("run %s holds %d pods (%v)", id, len(claimed.Items), err)
		}
		victim := claimed.Items[0].Name
		deleted := false
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if !deleted && strings.HasPrefix(sc.Text(), "[") {
				if err := c.Client.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: new(int64(1))}); err != nil {
					t.Fatal(err)
				}
				deleted = true
			}
		}
		err = cmd.Wait()
		log := strings.Join(lines, "\n")
		t.Logf("proctor run:\n%s", log)
		if err != nil || !deleted {
			t.Fatalf("the run exited with %v (pod deleted: %v)", err, deleted)
		}
		if !strings.Contains(log, "pod default/"+victim+": Deleted") {
			t.Errorf("the run does not say that %s was lost as Deleted", victim)
		}
		// The lost pod's place is taken by a new pod of the pool.
		if err := waitFor(90*time.Second, func() bool {
			head, _ := poolState(t, "warm")
			return strings.HasPrefix(head, "pool warm in namespace default: 3 pods, 3 Ready, 3 free, 0 claimed")
		}); err != nil {
			head, rows := poolState(t, "warm")
			t.Errorf("the pool was not made whole: %s\n%s", head, strings.Join(rows, "\n"))
		}
	})

	t.Run("concurrent claimers", func(t *testing.T) {
		// Rounds of two runs claiming every pod at once, on the API server:
		// each pod goes to one of them.
		for round := range 10 {
			var mu sync.Mutex
			holder := map[string]string{}
			var wg sync.WaitGroup
			for _, id := range []string{fmt.Sprintf("a%03d", round), fmt.Sprintf("b%03d", round)} {
				wg.Go(func() {
					pods, err := c.Claim(ctx, "warm", id, 3)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					defer mu.Unlock()
					for _, p := range pods {
						if h, ok := holder[p.Name]; ok {
							t.Errorf("round %d: pod %s claimed by %s and %s", round, p.Name, h, id)
						}
						holder[p.Name] = id
					}
				})
			}
			wg.Wait()
			_, rows := poolState(t, "warm")
			for _, r := range rows {
				f := strings.Fields(r)
				if holder[f[0]] != f[2] {
					t.Errorf("round %d: the cluster says %s is held by %s, its claimer %q", round, f[0], f[2], holder[f[0]])
				}
			}
			if len(holder) != 3 {
				t.Errorf("round %d: %d pods claimed, want 3", round, len(holder))
			}
			if n, err := c.GiveBackAll(ctx, ""); err != nil || n != len(holder) {
				t.Fatalf("round %d: gave back %d, %v", round, n, err)
			}
		}
	})

	t.Run("no more pods than episodes", func(t *testing.T) {
		_, errOut, code := runCLI(t, "", "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pods=3&wait=90s",
			"--filter", "^shell-write$", "--out", filepath.Join(t.TempDir(), "run"))
		if code != 0 || !strings.Contains(errOut, ": 1 pods Ready in namespace default") {
			t.Errorf("a run of one episode with pods=3 exited %d:\n%s", code, errOut)
		}
	})

	t.Run("a pool grown for a run and shrunk back", func(t *testing.T) {
		// A pool of 2 that may grow to 4: a run that can use 4 pods gets
		// 2 made for it, and the pool is 2 pods again after the run.
		out, errOut, code := runCLI(t, "", "kube", "pool", "up", "burst", "--pods", "2", "--max", "4", "--wait", "90s", "--namespace", "default")
		if code != 0 || !strings.Contains(out, "pool burst in namespace default: 2 pods Ready") {
			t.Fatalf("kube pool up burst exited %d: %s%s", code, out, errOut)
		}
		defer runCLI(t, "", "kube", "pool", "down", "burst", "--namespace", "default")
		head, _ := poolState(t, "burst")
		if !strings.Contains(head, "at most 4") {
			t.Errorf("pool status does not show the max: %s", head)
		}
		dir := filepath.Join(t.TempDir(), "run")
		out, errOut, code = runCLI(t, "", "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pool=burst&pods=4&wait=60s",
			"--filter", "^(shell-write|count-lines)$", "--repeat", "4", "--parallel", "4", "--out", dir)
		t.Logf("proctor run:\n%s%s", out, errOut)
		if code != 0 || !strings.Contains(errOut, "claimed 4 Ready pods of pool burst in namespace default (2 of them made for it: pool burst grew to at most 4 pods") {
			t.Fatalf("the run on pool burst exited %d, or did not grow it by 2", code)
		}
		rep, _, code := runCLI(t, "", "report", dir)
		if code != 0 || !strings.Contains(rep, "episodes                     8") || !strings.Contains(rep, "success rate                 100.0%") {
			t.Errorf("the report of the run on the grown pool:\n%s", rep)
		}
		if err := waitFor(60*time.Second, func() bool {
			head, _ := poolState(t, "burst")
			return strings.HasPrefix(head, "pool burst in namespace default: 2 pods, 2 Ready, 2 free, 0 claimed")
		}); err != nil {
			head, rows := poolState(t, "burst")
			t.Errorf("the pool did not shrink back to 2 pods: %s\n%s", head, strings.Join(rows, "\n"))
		}
	})

	out, errOut, code = runCLI(t, "", "kube", "pool", "down", "warm", "--namespace", "default")
	if code != 0 || !strings.Contains(out, "deleted 3 pods and 1 secrets of pool warm in namespace default") {
		t.Fatalf("kube pool down exited %d: %s%s", code, out, errOut)
	}
	sel := metav1.ListOptions{LabelSelector: kube.PoolSelector("warm")}
	if err := waitFor(30*time.Second, func() bool {
		pl, err := c.Client.CoreV1().Pods("default").List(ctx, sel)
		sl, err2 := c.Client.CoreV1().Secrets("default").List(ctx, sel)
		return err == nil && err2 == nil && len(pl.Items)+len(sl.Items) == 0
	}); err != nil {
		t.Errorf("pool down left objects labelled %s", kube.PoolSelector("warm"))
	}
}

// waitFor polls ok until it holds, for at most limit.
func waitFor(limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// TestKubeBedJobRBAC applies the service account, Role and RoleBinding
// that proctor kube job prints to the test bed, and runs the provider as
// that service account (the bed's admin impersonates it), for a run's own
// pods and for a warm pool's: the run succeeds with the Role's rules,
// and fails, Forbidden on the resource, with any one of them taken away.
func TestKubeBedJobRBAC(t *testing.T) {
	kc, c := bedClient(t)
	ctx := context.Background()
	if out, errOut, code := runCLI(t, "", "kube", "pool", "up", "jobs", "--pods", "2", "--wait", "90s", "--namespace", "default"); code != 0 {
		t.Fatalf("kube pool up exited %d: %s%s", code, out, errOut)
	}
	// The bed's pods are reached through the port-forward only: the
	// runs say so, as a Job would on a cluster whose pods it cannot
	// reach by address.
	for _, tc := range []struct {
		name, env string
		granted   []string
	}{
		{"proctor-run", "kube://default?pods=2&connect=forward&wait=90s",
			[]string{"pods: create,delete,get,list", "pods/portforward: create,get", "secrets: create,delete,list,patch"}},
		{"proctor-pool-run", "kube://default?pool=jobs&pods=2&connect=forward&wait=5s",
			[]string{"pods: create,delete,get,list,update", "pods/portforward: create,get", "secrets: get"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"validate", "../../testdata/runner", "--env", tc.env, "--filter", "^shell-write$"}
			role := applyJob(t, c, tc.name, args)
			var granted []string
			for _, r := range role.Rules {
				granted = append(granted, r.Resources[0]+": "+strings.Join(r.Verbs, ","))
			}
			t.Logf("the Role: %s", strings.Join(granted, "; "))
			if !slices.Equal(granted, tc.granted) {
				t.Errorf("the Role grants %v, want %v", granted, tc.granted)
			}
			// A kubeconfig whose user acts as the Job's service account.
			sa := "system:serviceaccount:default:" + tc.name
			raw, err := clientcmd.LoadFromFile(kc)
			if err != nil {
				t.Fatal(err)
			}
			raw.AuthInfos[raw.Contexts[raw.CurrentContext].AuthInfo].Impersonate = sa
			asJob := filepath.Join(t.TempDir(), "kubeconfig")
			if err := clientcmd.WriteToFile(*raw, asJob); err != nil {
				t.Fatal(err)
			}
			// Whatever a refused run left (its pods, the pods it claimed)
			// is removed as the bed's admin.
			clean := func() {
				if _, _, err := c.Remove(ctx, ""); err != nil {
					t.Fatal(err)
				}
				if _, err := c.GiveBackAll(ctx, ""); err != nil {
					t.Fatal(err)
				}
			}

			t.Run("the Role's rules", func(t *testing.T) {
				setRole(t, c, role, role.Rules, sa)
				t.Setenv("KUBECONFIG", asJob)
				out, errOut, code := runCLI(t, "", args...)
				t.Logf("proctor %s, as %s:\n%s%s", strings.Join(args, " "), sa, out, errOut)
				if code != 0 || !strings.Contains(out+errOut, "0 violations") {
					t.Fatalf("validate as the Job's service account exited %d", code)
				}
				if p, s := leftovers(t, c); p != 0 || s != 0 {
					t.Errorf("the run left %d pods and %d secrets", p, s)
				}
				if n, err := c.GiveBackAll(ctx, ""); n != 0 || err != nil {
					t.Errorf("the run left %d pool pods claimed (%v)", n, err)
				}
			})
			for i, r := range role.Rules {
				name := r.Resources[0]
				t.Run("without the rule on "+strings.ReplaceAll(name, "/", " "), func(t *testing.T) {
					defer clean()
					setRole(t, c, role, slices.Delete(slices.Clone(role.Rules), i, i+1), sa)
					t.Setenv("KUBECONFIG", asJob)
					_, errOut, code := runCLI(t, "", args...)
					t.Logf("without the rule on %s:\n%s", name, errOut)
					if code == 0 {
						t.Fatalf("validate succeeded without the rule on %s", name)
					}
					want := regexp.MustCompile(`forbidden: User "` + regexp.QuoteMeta(sa) + `" cannot \w+ resource "` + regexp.QuoteMeta(name) + `"`)
					if !want.MatchString(errOut) {
						t.Errorf("the error is not Forbidden on %s (want %s)", name, want)
					}
				})
			}
		})
	}
	if out, errOut, code := runCLI(t, "", "kube", "pool", "down", "jobs", "--namespace", "default"); code != 0 {
		t.Fatalf("kube pool down exited %d: %s%s", code, out, errOut)
	}
}

// applyJob prints the manifests of proctor kube job --name name -- args,
// creates its service account and role binding on the bed, and returns
// its Role (not created: setRole does).
func applyJob(t *testing.T, c *kube.Cluster, name string, args []string) *rbacv1.Role {
	t.Helper()
	ctx := context.Background()
	yaml, errOut, code := runCLI(t, "", append([]string{"kube", "job", "--name", name, "--namespace", "default", "--"}, args...)...)
	if code != 0 {
		t.Fatalf("kube job exited %d: %s", code, errOut)
	}
	var role *rbacv1.Role
	for _, doc := range strings.Split(yaml, "---\n") {
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("%v:\n%s", err, doc)
		}
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			_, err = c.Client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			_, err = c.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if role == nil {
		t.Fatalf("kube job printed no Role:\n%s", yaml)
	}
	return role
}

// setRole gives the Role rules, and waits until the authorizer says the
// service account sa may do what they grant.
func setRole(t *testing.T, c *kube.Cluster, role *rbacv1.Role, rules []rbacv1.PolicyRule, sa string) {
	t.Helper()
	ctx := context.Background()
	r := role.DeepCopy()
	r.Rules = rules
	cur, err := c.Client.RbacV1().Roles(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err == nil {
		r.ResourceVersion = cur.ResourceVersion
		_, err = c.Client.RbacV1().Roles(r.Namespace).Update(ctx, r, metav1.UpdateOptions{})
	} else {
		_, err = c.Client.RbacV1().Roles(r.Namespace).Create(ctx, r, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	ns := strings.Split(sa, ":")[2]
	for _, rule := range rules {
		res, sub, _ := strings.Cut(rule.Resources[0], "/")
		for _, v := range rule.Verbs {
			if err := waitFor(30*time.Second, func() bool {
				sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
					User:               sa,
					Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
					ResourceAttributes: &authzv1.ResourceAttributes{Namespace: r.Namespace, Verb: v, Resource: res, Subresource: sub},
				}}, metav1.CreateOptions{})
				return err == nil && sar.Status.Allowed
			}); err != nil {
				t.Fatalf("%s may not %s %s after the Role grants it", sa, v, rule.Resources[0])
			}
		}
	}
}
