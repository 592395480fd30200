// Package kubespec reads the value of --env kube://[CONTEXT/]NAMESPACE?...
// (the kube provider's spec) without the Kubernetes client, so that its
// fuzz test builds small.
package kubespec

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/proctor-eval/proctor/action"
	"github.com/proctor-eval/proctor/task"
)

// Spec is what an --env kube://[CONTEXT/]NAMESPACE?... value asks for.
type Spec struct {
	// Context is the kubeconfig context; "": the current one (or, in a
	// pod, the cluster it runs in).
	Context string
	// Namespace the pods go in; "": the context's namespace, else
	// "default".
	Namespace string
	Pods      int    // guest pods, 1 to 256
	Image     string // the guest image
	// PullPolicy is the image's pull policy (Always, IfNotPresent,
	// Never); "": Kubernetes' default.
	PullPolicy string
	// CPU and Memory are each pod's requests; MemoryLimit (default:
	// Memory) and CPULimit (default: none) its limits.
	CPU, Memory, CPULimit, MemoryLimit resource.Quantity
	NodeSelector                       map[string]string
	Tolerations                        []Toleration
	RuntimeClass                       string
	Size                               action.Size   // the desktops' screen size
	Wait                               time.Duration // how long pre-flight waits for the pods to be Ready
	// Connect is how the runner reaches the pods: "forward" (through
	// the API server's port-forward), "ip" (the pod's IP, from inside
	// the cluster), or "" (ip in a pod, forward elsewhere).
	Connect string
	// Pool is the warm pool (proctor kube pool up) whose Ready pods the
	// run claims instead of making its own; "": none.
	Pool string
	// TTL is how long what the run holds (its secret and pods, its
	// claims on a pool's pods) outlives the run's last renewal: the
	// run renews it every TTL/3, and once it lapses (the run was
	// killed) proctor kube clean --expired, or the next run, removes it.
	TTL time.Duration
}

// Usage is the form of the value.
const Usage = "kube://[CONTEXT/]NAMESPACE?pods=N&image=IMAGE&..."

// Defaults of a spec.
const (
	DefaultImage = "proctor-guest:latest"
	DefaultWait  = 3 * time.Minute
	MaxPods      = 256
	DefaultTTL   = 10 * time.Minute
	// MinTTL bounds ttl from below: the run renews every TTL/3.
	MinTTL = 3 * time.Second
)

// Parse reads what follows "kube://": [CONTEXT/]NAMESPACE and the
// query pods, image, pull, cpu, memory, cpu-limit, memory-limit, node
// (KEY=VALUE, repeatable), toleration (KEY[=VALUE]:EFFECT, repeatable),
// runtime-class, size (WIDTHxHEIGHT), wait (a duration), connect
// (forward or ip), pool and ttl (a duration, at least MinTTL). The context is all before the last "/", since
// contexts' names may hold slashes and namespaces' may not.
func Parse(arg string) (Spec, error) {
	s := Spec{Pods: 1, Image: DefaultImage, Wait: DefaultWait, TTL: DefaultTTL,
		CPU: resource.MustParse("500m"), Memory: resource.MustParse("1Gi"),
		Size: action.Size{W: 1920, H: 1080}}
	where, query, _ := strings.Cut(arg, "?")
	if i := strings.LastIndex(where, "/"); i >= 0 {
		s.Context, s.Namespace = where[:i], where[i+1:]
		if s.Context == "" {
			return Spec{}, fmt.Errorf("kube://%s: an empty context before the /: give CONTEXT/NAMESPACE or NAMESPACE", arg)
		}
	} else {
		s.Namespace = where
	}
	if s.Namespace != "" {
		if errs := validation.IsDNS1123Label(s.Namespace); len(errs) > 0 {
			return Spec{}, fmt.Errorf("namespace %q: %s", s.Namespace, strings.Join(errs, "; "))
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Spec{}, fmt.Errorf("the query %q: %v", query, err)
	}
	memLimit := false
	for k, vs := range q {
		for _, v := range vs {
			bad := func(format string, a ...any) error {
				return fmt.Errorf("%s=%s: %s", k, v, fmt.Sprintf(format, a...))
			}
			quantity := func() (resource.Quantity, error) {
				r, err := resource.ParseQuantity(v)
				if err != nil || r.Sign() <= 0 {
					return r, bad("a positive quantity, as in a pod's resources (500m, 2, 512Mi, 2Gi)")
				}
				return r, nil
			}
			switch k {
			case "pods":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 || n > MaxPods {
					return Spec{}, bad("give the number of guest pods, 1 to %d", MaxPods)
				}
				s.Pods = n
			case "image":
				if v == "" || strings.ContainsAny(v, " \t\n") {
					return Spec{}, bad("give an image reference (registry.example/proctor-guest:1)")
				}
				s.Image = v
			case "pull":
				switch v {
				case "Always", "IfNotPresent", "Never":
					s.PullPolicy = v
				default:
					return Spec{}, bad("Always, IfNotPresent or Never")
				}
			case "cpu", "memory", "cpu-limit", "memory-limit":
				r, err := quantity()
				if err != nil {
					return Spec{}, err
				}
				switch k {
				case "cpu":
					s.CPU = r
				case "memory":
					s.Memory = r
				case "cpu-limit":
					s.CPULimit = r
				case "memory-limit":
					s.MemoryLimit, memLimit = r, true
				}
			case "node":
				key, val, ok := strings.Cut(v, "=")
				if !ok || validation.IsQualifiedName(key) != nil || validation.IsValidLabelValue(val) != nil {
					return Spec{}, bad("a node label KEY=VALUE the pods must run on (disktype=ssd)")
				}
				if s.NodeSelector == nil {
					s.NodeSelector = map[string]string{}
				}
				s.NodeSelector[key] = val
			case "toleration":
				t, err := parseToleration(v)
				if err != nil {
					return Spec{}, bad("%v", err)
				}
				s.Tolerations = append(s.Tolerations, t)
			case "runtime-class":
				if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
					return Spec{}, bad("a RuntimeClass name (gvisor): %s", strings.Join(errs, "; "))
				}
				s.RuntimeClass = v
			case "size":
				size, err := task.Environment{Resolution: v}.Size()
				if err != nil {
					return Spec{}, bad("%v", err)
				}
				s.Size = size
			case "wait":
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return Spec{}, bad("a duration (90s, 5m)")
				}
				s.Wait = d
			case "connect":
				if v != "forward" && v != "ip" {
					return Spec{}, bad("forward (through the API server) or ip (the pods' addresses, from inside the cluster)")
				}
				s.Connect = v
			case "pool":
				if err := ValidPoolName(v); err != nil {
					return Spec{}, bad("%v", err)
				}
				s.Pool = v
			case "ttl":
				d, err := time.ParseDuration(v)
				if err != nil || d < MinTTL {
					return Spec{}, bad("a duration of at least %s (10m, 1h)", MinTTL)
				}
				s.TTL = d
			default:
				return Spec{}, fmt.Errorf("unknown parameter %q (known: pods, image, pull, cpu, memory, cpu-limit, memory-limit, node, toleration, runtime-class, size, wait, connect, pool, ttl)", k)
			}
		}
	}
	if s.Pool != "" {
		if k := PoolOwn(q); k != "" {
			return Spec{}, fmt.Errorf("%s with pool=%s: the pool's pods were made with their own (proctor kube pool status %s)", k, s.Pool, s.Pool)
		}
	}
	if !memLimit {
		s.MemoryLimit = s.Memory
	}
	if s.MemoryLimit.Cmp(s.Memory) < 0 {
		return Spec{}, fmt.Errorf("memory-limit=%s is below memory=%s", s.MemoryLimit.String(), s.Memory.String())
	}
	if !s.CPULimit.IsZero() && s.CPULimit.Cmp(s.CPU) < 0 {
		return Spec{}, fmt.Errorf("cpu-limit=%s is below cpu=%s", s.CPULimit.String(), s.CPU.String())
	}
	return s, nil
}

// Toleration is a pod's toleration of a taint, as Kubernetes' core/v1
// Toleration has it: Operator Exists or Equal (with Value), Effect
// NoSchedule, PreferNoSchedule, NoExecute or "" (every effect).
type Toleration struct {
	Key, Operator, Value, Effect string
}

// parseToleration reads KEY[=VALUE]:EFFECT, or KEY[=VALUE] for every
// effect.
func parseToleration(v string) (Toleration, error) {
	kv, effect, _ := strings.Cut(v, ":")
	key, val, hasVal := strings.Cut(kv, "=")
	t := Toleration{Key: key, Operator: "Exists"}
	if hasVal {
		t.Operator, t.Value = "Equal", val
	}
	switch effect {
	case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
		t.Effect = effect
	default:
		return t, fmt.Errorf("effect %q: NoSchedule, PreferNoSchedule or NoExecute", effect)
	}
	if key == "" || validation.IsQualifiedName(key) != nil {
		return t, fmt.Errorf("want KEY[=VALUE][:EFFECT] with a taint's key (gpu=true:NoSchedule)")
	}
	return t, nil
}

// MaxPoolName bounds a warm pool's name (its objects' names carry it).
const MaxPoolName = 40

// ValidPoolName says what is wrong with a warm pool's name, or nil.
func ValidPoolName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("a pool's name is a DNS label (lower-case letters, digits, -): %s", strings.Join(errs, "; "))
	}
	if len(name) > MaxPoolName {
		return fmt.Errorf("a pool's name is at most %d characters", MaxPoolName)
	}
	return nil
}

// PoolOwn returns the first parameter of q that a pool's pods fix (their
// image, resources, placement, screen), or "".
func PoolOwn(q url.Values) string {
	for _, k := range []string{"image", "pull", "cpu", "memory", "cpu-limit", "memory-limit", "node", "toleration", "runtime-class", "size"} {
		if q.Has(k) {
			return k
		}
	}
	return ""
}
