package kubespec

import (
	"strings"
	"testing"
	"time"

	"github.com/proctor-eval/proctor/action"
)

func TestParse(t *testing.T) {
	tests := []struct {
		arg  string
		want func(*testing.T, Spec)
		err  string
	}{
		{arg: "evals", want: func(t *testing.T, s Spec) {
			if s.Context != "" || s.Namespace != "evals" || s.Pods != 1 || s.Image != DefaultImage || s.Wait != DefaultWait || s.TTL != DefaultTTL {
				t.Errorf("defaults: %+v", s)
			}
			if s.MemoryLimit.Cmp(s.Memory) != 0 || !s.CPULimit.IsZero() {
				t.Errorf("limits: memory %s (request %s), cpu %s", s.MemoryLimit.String(), s.Memory.String(), s.CPULimit.String())
			}
		}},
		{arg: "", want: func(t *testing.T, s Spec) {
			if s.Namespace != "" || s.Context != "" {
				t.Errorf("empty: %+v", s)
			}
		}},
		{arg: "kind-dev/evals?pods=8", want: func(t *testing.T, s Spec) {
			if s.Context != "kind-dev" || s.Namespace != "evals" || s.Pods != 8 {
				t.Errorf("got %+v", s)
			}
		}},
		// An EKS context's name holds slashes: the namespace is after the last.
		{arg: "arn:aws:eks:eu-west-1:123:cluster/evals/ns1", want: func(t *testing.T, s Spec) {
			if s.Context != "arn:aws:eks:eu-west-1:123:cluster/evals" || s.Namespace != "ns1" {
				t.Errorf("got context %q namespace %q", s.Context, s.Namespace)
			}
		}},
		{arg: "evals?image=reg.example/proctor-guest:1&pull=Always&cpu=1&memory=512Mi&memory-limit=1Gi&cpu-limit=2" +
			"&node=disktype=ssd&node=zone=a&toleration=gpu=true:NoSchedule&toleration=spot&runtime-class=gvisor&size=1024x768&wait=45s&connect=ip",
			want: func(t *testing.T, s Spec) {
				if s.Image != "reg.example/proctor-guest:1" || s.PullPolicy != "Always" || s.CPU.String() != "1" ||
					s.Memory.String() != "512Mi" || s.MemoryLimit.String() != "1Gi" || s.CPULimit.String() != "2" {
					t.Errorf("image and resources: %+v", s)
				}
				if s.NodeSelector["disktype"] != "ssd" || s.NodeSelector["zone"] != "a" || len(s.NodeSelector) != 2 {
					t.Errorf("node selector %v", s.NodeSelector)
				}
				want := []Toleration{
					{Key: "gpu", Operator: "Equal", Value: "true", Effect: "NoSchedule"},
					{Key: "spot", Operator: "Exists"},
				}
				if len(s.Tolerations) != 2 || s.Tolerations[0] != want[0] || s.Tolerations[1] != want[1] {
					t.Errorf("tolerations %+v, want %+v", s.Tolerations, want)
				}
				if s.RuntimeClass != "gvisor" || s.Size != (action.Size{W: 1024, H: 768}) || s.Wait != 45*time.Second || s.Connect != "ip" {
					t.Errorf("got %+v", s)
				}
			}},
		{arg: "Evals", err: `namespace "Evals"`},
		{arg: "/evals", err: "empty context"},
		{arg: "evals?pods=0", err: "pods=0: give the number of guest pods, 1 to 256"},
		{arg: "evals?pods=257", err: "1 to 256"},
		{arg: "evals?pods=x", err: "pods=x"},
		{arg: "evals?memory=lots", err: "memory=lots: a positive quantity"},
		{arg: "evals?cpu=-1", err: "cpu=-1: a positive quantity"},
		{arg: "evals?memory=2Gi&memory-limit=1Gi", err: "memory-limit=1Gi is below memory=2Gi"},
		{arg: "evals?cpu=2&cpu-limit=1", err: "cpu-limit=1 is below cpu=2"},
		{arg: "evals?node=ssd", err: "node=ssd: a node label KEY=VALUE"},
		{arg: "evals?toleration=gpu:Sometimes", err: `effect "Sometimes"`},
		{arg: "evals?toleration=:NoSchedule", err: "taint's key"},
		{arg: "evals?pull=Sometimes", err: "Always, IfNotPresent or Never"},
		{arg: "evals?size=big", err: "size=big"},
		{arg: "evals?wait=soon", err: "wait=soon: a duration"},
		{arg: "evals?connect=ssh", err: "connect=ssh: forward"},
		{arg: "evals?image=", err: "give an image reference"},
		{arg: "evals?runtime-class=Not_A_Name", err: "a RuntimeClass name"},
		{arg: "evals?replicas=3", err: `unknown parameter "replicas"`},
		{arg: "evals?pods=%zz", err: "the query"},
		{arg: "evals?pool=warm&pods=3&wait=1m", want: func(t *testing.T, s Spec) {
			if s.Pool != "warm" || s.Pods != 3 || s.Wait != time.Minute {
				t.Errorf("got %+v", s)
			}
		}},
		{arg: "evals?ttl=90s&pool=warm", want: func(t *testing.T, s Spec) {
			if s.TTL != 90*time.Second || s.Pool != "warm" {
				t.Errorf("got %+v", s)
			}
		}},
		{arg: "evals?ttl=3s", want: func(t *testing.T, s Spec) {
			if s.TTL != MinTTL {
				t.Errorf("got %+v", s)
			}
		}},
		{arg: "evals?ttl=2s", err: "ttl=2s: a duration of at least 3s"},
		{arg: "evals?ttl=soon", err: "ttl=soon: a duration of at least 3s"},
		{arg: "evals?pool=warm&image=x", err: "image with pool=warm: the pool's pods were made with their own"},
		{arg: "evals?pool=Warm_1", err: "pool=Warm_1: a pool's name is a DNS label"},
		{arg: "evals?pool=" + strings.Repeat("a", 41), err: "at most 40 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			s, err := Parse(tt.arg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse(%q) = %v, want an error with %q", tt.arg, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.arg, err)
			}
			tt.want(t, s)
		})
	}
}

// FuzzParse: what a user types never panics the parser, and what it
// accepts is in bounds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"evals", "ctx/evals?pods=3&image=x", "a/b/c?memory=1Gi&memory-limit=2Gi", "?wait=1s", "ns?toleration=k=v:NoExecute&node=a=b", "ns?pool=w&ttl=1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		s, err := Parse(arg)
		if err != nil {
			return
		}
		if s.Pods < 1 || s.Pods > MaxPods || s.Image == "" || s.Wait <= 0 || s.TTL < MinTTL || s.MemoryLimit.Cmp(s.Memory) < 0 {
			t.Errorf("Parse(%q) accepted %+v", arg, s)
		}
		if strings.Contains(s.Namespace, "/") {
			t.Errorf("Parse(%q): namespace %q", arg, s.Namespace)
		}
	})
}
