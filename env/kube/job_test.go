package kube

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

// calls lists the API calls the fake clientset saw, as RESOURCE VERB.
func calls(cs *fake.Clientset) []string {
	var out []string
	for _, a := range cs.Actions() {
		r := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			r += "/" + sub
		}
		if c := r + " " + a.GetVerb(); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// granted lists what rules grant, as RESOURCE VERB.
func granted(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				out = append(out, res+" "+v)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestRulesAreTheCalls: the rules of a run are the API calls that the
// provider's steps of that run make, no fewer and no more. (Port-forward
// is not on the fake clientset: the bed's test runs it.)
func TestRulesAreTheCalls(t *testing.T) {
	ctx := context.Background()
	t.Run("own pods", func(t *testing.T) {
		c, cs := poolCluster(t, nil)
		s := poolSpec(t, "pods=2&wait=2s")
		r, err := NewRun()
		if err != nil {
			t.Fatal(err)
		}
		// Sources: the sweep of killed runs, Make, WaitReady, the lease's
		// renewal, a pod that stops answering (explain), each place's
		// release (DeletePod), the last one's Remove.
		if _, err := c.RemoveExpired(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		pods, err := c.Make(ctx, r, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.renewRun(ctx, r.ID, s.TTL, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitReady(ctx, r, 2, time.Second, time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Pod(ctx, pods[0].Name); err != nil {
			t.Fatal(err)
		}
		if err := c.DeletePod(ctx, pods[0].Name); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Remove(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if got, want := calls(cs), granted(Rules(s, true)); !slices.Equal(got, want) {
			t.Errorf("calls %v, rules %v", got, want)
		}
	})
	t.Run("a pool's pods", func(t *testing.T) {
		c, cs := poolCluster(t, nil)
		if _, _, err := c.PoolUp(ctx, "warm", poolSpec(t, "pods=2&wait=2s"), "", 0); err != nil {
			t.Fatal(err)
		}
		cs.ClearActions()
		s := poolSpec(t, "pool=warm&pods=2")
		// PoolSources: the sweep of lapsed claims, the pool's secret,
		// Claim, growing the pool, the lease's renewal, the pool's state
		// when none is free,
		// explain, and each place's Close: Pod, then GiveBack, or Replace
		// when the pod was lost.
		if _, err := c.ClaimFor(ctx, "warm", "killed", 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		if n, err := c.GiveBackExpired(ctx, time.Now().Add(time.Hour)); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		sec, cred, err := c.poolSecret(ctx, "warm")
		if err != nil {
			t.Fatal(err)
		}
		pods, err := c.ClaimFor(ctx, "warm", "run1", 2, s.TTL)
		if err != nil || len(pods) != 2 {
			t.Fatal(pods, err)
		}
		cred.max = 3
		grown, err := c.grow(ctx, "warm", "run1", 1, s.TTL, time.Second, sec, cred)
		if err != nil || len(grown) != 1 {
			t.Fatal(grown, err)
		}
		if _, err := c.GiveBack(ctx, grown[0].Name, "run1"); err != nil {
			t.Fatal(err)
		}
		if err := c.renewClaims(ctx, "run1", s.TTL, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.PoolStatus(ctx, "warm"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Pod(ctx, pods[0].Name); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GiveBack(ctx, pods[0].Name, "run1"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Replace(ctx, "warm", pods[1].Name); err != nil {
			t.Fatal(err)
		}
		if got, want := calls(cs), granted(Rules(s, true)); !slices.Equal(got, want) {
			t.Errorf("calls %v, rules %v", got, want)
		}
	})
}

func TestRulesPortForward(t *testing.T) {
	for _, tc := range []struct {
		query     string
		inCluster bool
		forward   bool
	}{
		{"", true, false},
		{"", false, true},
		{"connect=forward", true, true},
		{"connect=ip", false, false},
		{"pool=warm", false, true},
	} {
		got := slices.Contains(granted(Rules(poolSpec(t, tc.query), tc.inCluster)), "pods/portforward get")
		if got != tc.forward {
			t.Errorf("Rules(%q, in cluster %v) grants port-forward: %v", tc.query, tc.inCluster, got)
		}
	}
}

func TestJobManifests(t *testing.T) {
	j := Job{Name: "evalrun", Image: "reg.example/proctor-guest:1",
		Args: []string{"run", "--agent", "replay", "--env", "kube://evals?pods=4", "--env=kube://warm?pool=big&pods=2", "--env", "local"}}
	objs, err := j.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			got = append(got, "ServiceAccount "+o.Namespace+"/"+o.Name)
		case *rbacv1.Role:
			got = append(got, "Role "+o.Namespace+"/"+o.Name+": "+strings.Join(granted(o.Rules), ", "))
		case *rbacv1.RoleBinding:
			got = append(got, "RoleBinding "+o.Namespace+"/"+o.Name+": "+o.Subjects[0].Namespace+"/"+o.Subjects[0].Name+" -> "+o.RoleRef.Name)
		case *batchv1.Job:
			pod := o.Spec.Template.Spec
			got = append(got, "Job "+o.Namespace+"/"+o.Name+": "+pod.ServiceAccountName+" "+pod.Containers[0].Image+" "+
				strings.Join(append(pod.Containers[0].Command, pod.Containers[0].Args...), " "))
			if *o.Spec.BackoffLimit != 0 || pod.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("the Job runs a failed run again")
			}
			if o.Labels[LabelName] == guestName {
				t.Errorf("the Job carries the guests' labels: kube clean would delete it")
			}
		}
	}
	want := []string{
		"ServiceAccount evals/evalrun",
		"Role evals/evalrun: pods create, pods delete, pods get, pods list, secrets create, secrets delete, secrets list, secrets patch",
		"RoleBinding evals/evalrun: evals/evalrun -> evalrun",
		"Role warm/evalrun: pods create, pods delete, pods get, pods list, pods update, secrets get",
		"RoleBinding warm/evalrun: evals/evalrun -> evalrun",
		"Job evals/evalrun: evalrun reg.example/proctor-guest:1 proctor run --agent replay --env kube://evals?pods=4 --env=kube://warm?pool=big&pods=2 --env local",
	}
	if !slices.Equal(got, want) {
		t.Errorf("manifests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The YAML reads back as the same objects.
	b, err := YAML(objs)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "---\n")
	if len(docs) != len(objs) {
		t.Fatalf("%d YAML documents for %d objects", len(docs), len(objs))
	}
	for i, d := range docs {
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(d), nil, nil)
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, d)
		}
		if gk, wk := o.GetObjectKind().GroupVersionKind().Kind, objs[i].GetObjectKind().GroupVersionKind().Kind; gk != wk {
			t.Errorf("document %d is a %s, want %s", i, gk, wk)
		}
	}
}

func TestJobRefused(t *testing.T) {
	for _, tc := range []struct {
		j   Job
		err string
	}{
		{Job{Name: "r", Image: "i", Args: []string{"run", "--env", "local"}}, "the command after -- has no --env kube:// value"},
		{Job{Name: "r", Image: "i", Args: []string{"run", "--env", "kube://kind-dev/evals"}}, "a Job reaches the cluster it runs in: give kube://NAMESPACE, without the context kind-dev"},
		{Job{Name: "r", Image: "i", Args: []string{"run", "--env", "kube://evals?pods=0"}}, "pods=0"},
		{Job{Name: "R", Image: "i", Args: []string{"run", "--env", "kube://evals"}}, `name "R"`},
		{Job{Name: "r", Args: []string{"run", "--env", "kube://evals"}}, "no image"},
	} {
		if _, err := tc.j.Manifests(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: %v, want %q", tc.j.Args, err, tc.err)
		}
	}
	// A value without a namespace is the Job's.
	objs, err := Job{Name: "r", Namespace: "jobs", Image: "i", Args: []string{"run", "--env", "kube://"}}.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if role := objs[1].(*rbacv1.Role); role.Namespace != "jobs" {
		t.Errorf("the Role of kube:// is in %s, want the Job's namespace", role.Namespace)
	}
}
