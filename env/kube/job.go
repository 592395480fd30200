package kube

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
)

// Rules are the permissions a run with spec needs in its namespace, and
// no more: the API calls of this package, by what the run does. Its own
// pods: it lists the pods and secrets of killed runs whose lease lapsed
// and deletes them, creates its secret and pods, lists them while they
// start, patches its secret to renew its lease, reads a pod that stops
// answering, and deletes both (listing them) when it ends. A pool's
// pods: it lists the claimed pool pods and gives back (reads and
// updates) those whose claim lapsed, reads the pool's secret, lists its
// pods and claims, renews and gives them back by updating them, grows
// the pool with pods it creates and deletes, reads a pod that stops
// answering, and deletes a lost one and creates its replacement. Through
// the API server's port-forward (forward: not in the cluster, or
// connect=forward) it gets pods/portforward, or creates it where the
// server takes SPDY only.
func Rules(s Spec, inCluster bool) []rbacv1.PolicyRule {
	var pods, secrets []string
	if s.Pool == "" {
		pods = []string{"create", "delete", "get", "list"}
		secrets = []string{"create", "delete", "list", "patch"}
	} else {
		pods = []string{"create", "delete", "get", "list", "update"}
		secrets = []string{"get"}
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: pods},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: secrets},
	}
	if s.Connect == "forward" || s.Connect == "" && !inCluster {
		// get: the port-forward over a WebSocket (a GET that is
		// upgraded); create: over SPDY (a POST), where the API server
		// refuses the WebSocket.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"create", "get"}})
	}
	return rules
}

// mergeRules is the union of rule sets of the form Rules makes (one
// resource each, the core group).
func mergeRules(sets ...[]rbacv1.PolicyRule) []rbacv1.PolicyRule {
	verbs := map[string][]string{}
	for _, set := range sets {
		for _, r := range set {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if !slices.Contains(verbs[res], v) {
						verbs[res] = append(verbs[res], v)
					}
				}
			}
		}
	}
	var res []string
	for r := range verbs {
		res = append(res, r)
	}
	sort.Strings(res)
	var out []rbacv1.PolicyRule
	for _, r := range res {
		v := verbs[r]
		sort.Strings(v)
		out = append(out, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{r}, Verbs: v})
	}
	return out
}

// Job is what proctor kube job writes: the manifests that run "proctor
// ARGS..." as a Job in the cluster, with a service account that may do
// what the run's --env kube:// values need, and no more.
type Job struct {
	Name      string // of the Job, its service account, roles and bindings
	Namespace string // the Job's; "": that of the first kube:// value, else default
	Image     string // holding proctor: the guest image does
	Args      []string
}

// Manifests returns the service account, a Role and a RoleBinding in
// each namespace that a kube:// value of the args names (the rules its
// runs need there, as Rules says, in the cluster), and the Job. Args
// with no --env kube:// value, or with one that names a kubeconfig
// context (a Job reaches the cluster it runs in), are refused.
func (j Job) Manifests() ([]runtime.Object, error) {
	if errs := validation.IsDNS1123Label(j.Name); len(errs) > 0 {
		return nil, fmt.Errorf("name %q: %s", j.Name, strings.Join(errs, "; "))
	}
	if j.Image == "" {
		return nil, fmt.Errorf("no image: give one that holds proctor (the guest image does)")
	}
	var specs []Spec
	for i := 0; i < len(j.Args); i++ {
		a := j.Args[i]
		v, ok := strings.CutPrefix(a, "--env=")
		if !ok && a == "--env" && i+1 < len(j.Args) {
			v, ok = j.Args[i+1], true
			i++
		}
		if !ok {
			continue
		}
		arg, kube := strings.CutPrefix(v, "kube://")
		if !kube {
			continue
		}
		s, err := ParseSpec(arg)
		if err != nil {
			return nil, fmt.Errorf("--env %s: %w", v, err)
		}
		if s.Context != "" {
			return nil, fmt.Errorf("--env %s: a Job reaches the cluster it runs in: give kube://NAMESPACE, without the context %s", v, s.Context)
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("the command after -- has no --env kube:// value: the Job runs proctor with guest pods of the cluster (proctor kube job -- run SUITE --env 'kube://NAMESPACE?pods=4')")
	}
	ns := j.Namespace
	if ns == "" {
		ns = orElse(specs[0].Namespace, "default")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return nil, fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	byNS := map[string][][]rbacv1.PolicyRule{}
	var order []string
	for _, s := range specs {
		// In the Job, a kube:// value without a namespace is the
		// namespace of its service account.
		n := orElse(s.Namespace, ns)
		if _, ok := byNS[n]; !ok {
			order = append(order, n)
		}
		byNS[n] = append(byNS[n], Rules(s, true))
	}
	lbl := map[string]string{LabelManagedBy: managedBy, LabelName: "proctor-run", "proctor.dev/job": j.Name}
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: j.Name, Namespace: n, Labels: lbl}
	}
	out := []runtime.Object{&corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(ns),
	}}
	for _, n := range order {
		out = append(out,
			&rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: meta(n),
				Rules:      mergeRules(byNS[n]...),
			},
			&rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: meta(n),
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: j.Name, Namespace: ns}},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: j.Name},
			})
	}
	out = append(out, &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(ns),
		Spec: batchv1.JobSpec{
			// A run that fails is not run again over its folder.
			BackoffLimit: new(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					ServiceAccountName: j.Name,
					RestartPolicy:      corev1.RestartPolicyNever,
					EnableServiceLinks: new(false),
					Containers: []corev1.Container{{
						Name:    "proctor",
						Image:   j.Image,
						Command: []string{"proctor"},
						Args:    j.Args,
					}},
				},
			},
		},
	})
	return out, nil
}

// YAML writes objects as a YAML stream, one document each.
func YAML(objs []runtime.Object) ([]byte, error) {
	ser := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{Yaml: true})
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		if err := ser.Encode(o, &b); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}
