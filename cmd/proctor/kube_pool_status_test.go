package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/proctor-eval/proctor/env/kube"
)

func TestWritePoolStatus(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, query string
		size, max   int
		pods        []kube.PoolPod
		want        string
	}{
		{"empty", "", 0, 0, nil, "pool warm in namespace evals: 0 pods, 0 Ready, 0 free, 0 claimed (pods made from the defaults)\n"},
		{"claimed and failed", "image=reg.example%2Fguest%3A1&memory=2Gi", 3, 6, []kube.PoolPod{
			{Name: "proctor-pool-warm-1", State: "Ready", Claim: "3f9a0c1e", Claimed: now.Add(-2 * time.Minute), Created: now.Add(-41 * time.Minute), Node: "node-1"},
			{Name: "proctor-pool-warm-2", State: "Ready", Created: now.Add(-41 * time.Minute), Node: "node-2"},
			{Name: "proctor-pool-warm-3", State: "Pending", Created: now.Add(-5 * time.Second)},
			{Name: "proctor-pool-warm-4", State: "OOMKilled", Created: now.Add(-3 * time.Hour), Node: "node-1"},
		}, `pool warm in namespace evals: 4 pods, 2 Ready, 1 free, 1 claimed, size 3, at most 6 (pods made from image=reg.example/guest:1&memory=2Gi)
pod                  state      claimed by  claimed for  age  node
proctor-pool-warm-1  Ready      3f9a0c1e    2m           41m  node-1
proctor-pool-warm-2  Ready      -           -            41m  node-2
proctor-pool-warm-3  Pending    -           -            5s   -
proctor-pool-warm-4  OOMKilled  -           -            3h   node-1
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			cmd := &cobra.Command{}
			cmd.SetOut(&b)
			writePoolStatus(cmd, "warm", "evals", tc.query, tc.size, tc.max, tc.pods, now)
			if b.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), tc.want)
			}
		})
	}
}
