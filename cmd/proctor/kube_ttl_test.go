package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/proctor-eval/proctor/env/kube"
)

// leaseOf reads when the lease of a run's secret lapses.
func leaseOf(t *testing.T, c *kube.Cluster, id string) time.Time {
	t.Helper()
	s, err := c.Client.CoreV1().Secrets(c.Namespace).Get(context.Background(), (&kube.Run{ID: id}).SecretName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, s.Annotations["proctor.dev/expires"])
	if err != nil {
		t.Fatalf("secret %s has no lease: %v", s.Name, s.Annotations)
	}
	return at
}

// TestKubeBedTTL: what a run killed with SIGKILL leaves lapses with its
// lease. A live run with ttl=9s renews its lease throughout. A run on its
// own pods is killed; once its lease lapsed, the next run removes its
// pods and secret, and not the live run's. A run on a warm pool is
// killed; once its claims lapsed, proctor kube clean --expired gives its
// pods back to the pool, and leaves the live run alone.
func TestKubeBedTTL(t *testing.T) {
	_, c := bedClient(t)
	ctx := context.Background()
	start := func(env string) (id string, kill func()) {
		cmd, sc := startProctor(t, "run", "../../testdata/runner", "--agent", "replay", "--env", env,
			"--filter", "^shell-write$", "--repeat", "500", "--out", filepath.Join(t.TempDir(), "run"))
		var lines []string
		id = readyRun(t, sc, &lines)
		go func() {
			for sc.Scan() {
			}
		}()
		return id, func() {
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}
	}
	live, killLive := start("kube://default?pods=1&wait=90s&ttl=9s")
	defer func() {
		killLive()
		runCLI(t, "", "kube", "clean", "--run", live, "--namespace", "default")
	}()

	t.Run("a run on its own pods", func(t *testing.T) {
		killed, kill := start("kube://default?pods=2&wait=90s&ttl=9s")
		kill()
		if p, s := runLeftovers(t, c, killed); p != 2 || s != 1 {
			t.Fatalf("the killed run left %d pods and %d secrets, want its 2 and 1", p, s)
		}
		lapses := leaseOf(t, c, killed)
		if err := waitFor(30*time.Second, func() bool { return time.Now().After(lapses.Add(time.Second)) }); err != nil {
			t.Fatal(err)
		}
		if at := leaseOf(t, c, live); !at.After(time.Now()) {
			t.Fatalf("the live run's lease lapsed at %s: it was not renewed", at)
		}
		out, errOut, code := runCLI(t, "", "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pods=1&wait=90s",
			"--filter", "^shell-write$", "--out", filepath.Join(t.TempDir(), "next"))
		t.Logf("the next run:\n%s%s", out, errOut)
		if code != 0 {
			t.Fatalf("the next run exited %d", code)
		}
		if want := "kube: removed 2 pods and 1 secrets of run " + killed + " in namespace default (its lease lapsed "; !strings.Contains(errOut, want) {
			t.Errorf("the next run does not say %q", want)
		}
		if err := waitFor(30*time.Second, func() bool { return runObjectsLeft(t, c, killed) == 0 }); err != nil {
			t.Errorf("%d objects with the killed run's label are left", runObjectsLeft(t, c, killed))
		}
		if p, s := runLeftovers(t, c, live); p != 1 || s != 1 {
			t.Errorf("the live run has %d pods and %d secrets, want its 1 and 1", p, s)
		}
	})

	t.Run("a run on a pool", func(t *testing.T) {
		if out, errOut, code := runCLI(t, "", "kube", "pool", "up", "ttl", "--pods", "2", "--wait", "90s", "--namespace", "default"); code != 0 {
			t.Fatalf("kube pool up exited %d: %s%s", code, out, errOut)
		}
		defer runCLI(t, "", "kube", "pool", "down", "ttl", "--namespace", "default")
		killed, kill := start("kube://default?pool=ttl&pods=2&wait=30s&ttl=9s")
		kill()
		claimed, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: kube.LabelClaim + "=" + killed})
		if err != nil || len(claimed.Items) != 2 {
			t.Fatalf("the killed run holds %d pods (%v), want 2", len(claimed.Items), err)
		}
		var lapses time.Time
		for _, p := range claimed.Items {
			at, err := time.Parse(time.RFC3339, p.Annotations["proctor.dev/expires"])
			if err != nil {
				t.Fatalf("claimed pod %s has no lease: %v", p.Name, p.Annotations)
			}
			if at.After(lapses) {
				lapses = at
			}
		}
		if err := waitFor(30*time.Second, func() bool { return time.Now().After(lapses.Add(time.Second)) }); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCLI(t, "", "kube", "clean", "--expired", "--namespace", "default")
		t.Logf("kube clean --expired:\n%s%s", out, errOut)
		if code != 0 || !strings.Contains(out, "gave back 2 pods of warm pools whose claims lapsed in namespace default") ||
			!strings.Contains(out, "deleted 0 pods and 0 secrets of 0 expired runs in namespace default") {
			t.Errorf("kube clean --expired exited %d, or did not give back the killed run's 2 pods only", code)
		}
		head, rows := poolState(t, "ttl")
		t.Logf("kube pool status: %s\n%s", head, strings.Join(rows, "\n"))
		if !strings.HasPrefix(head, "pool ttl in namespace default: 2 pods, 2 Ready, 2 free, 0 claimed") {
			t.Errorf("the pool's pods were not given back")
		}
		if p, s := runLeftovers(t, c, live); p != 1 || s != 1 {
			t.Errorf("the live run has %d pods and %d secrets, want its 1 and 1", p, s)
		}
	})
}

// TestKubeBedNodeStoppedAtEnd: a run's pods on a node that stopped
// before the run noticed (no episode ran on them since) are deleted at
// the run's end and stay Terminating, since no kubelet confirms their
// end; once the node's lease expires the run force-deletes them, and
// nothing with the run's label is left.
func TestKubeBedNodeStoppedAtEnd(t *testing.T) {
	kc, c := bedClient(t)
	ctx := context.Background()
	spec, err := kube.ParseSpec("default?pods=4&memory=512Mi&wait=90s")
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	srcs, err := c.Sources(ctx, spec, &log)
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(log.String(), "kube: run ")
	id, _, _ := strings.Cut(after, ":")
	pl, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: (&kube.Run{ID: id}).Selector()})
	if err != nil {
		t.Fatal(err)
	}
	var stopped []string
	for _, p := range pl.Items {
		if p.Spec.NodeName == "node-2" {
			stopped = append(stopped, p.Name)
		}
	}
	if len(pl.Items) != 4 || len(stopped) == 0 {
		t.Fatalf("run %s has %d pods, %v on node-2", id, len(pl.Items), stopped)
	}
	stopNode(t, filepath.Dir(kc), "node-2")
	begin := time.Now()
	for _, s := range srcs {
		s.Release()
	}
	t.Logf("the run's end took %s after node-2 stopped with pods %v:\n%s", time.Since(begin).Round(time.Second), stopped, log.String())
	if n := runObjectsLeft(t, c, id); n != 0 {
		t.Errorf("%d objects with the run's label are left", n)
	}
	for _, p := range stopped {
		if want := "kube: pod default/" + p + " force-deleted at the run's end: node node-2 stopped answering"; !strings.Contains(log.String(), want) {
			t.Errorf("the run does not say %q", want)
		}
	}
}
