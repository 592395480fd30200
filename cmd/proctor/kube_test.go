package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/proctor-eval/proctor/env/kube"
)

// kubeBed returns the kubeconfig of a Kubernetes test bed (tools/kubebed):
// the running one that $PROCTOR_KUBEBED names, or one started here from
// the binaries in $PROCTOR_KUBEBED_BIN or tools/kubebed/build.sh's cache,
// with two stand-in nodes whose pods run this test binary as proctor and
// have only the image proctor-guest:latest. Without one it skips the
// test, or fails it under CI (CI=true) and where scripts/test.sh built the
// bed ($PROCTOR_KUBEBED_BIN set): there the bed must run.
func kubeBed(t *testing.T) string {
	t.Helper()
	if kc := os.Getenv("PROCTOR_KUBEBED"); kc != "" {
		return kc
	}
	bin, err := kubeBedBinaries()
	if err != nil {
		kubeBedSkip(t, "%v", err)
	}
	if os.Geteuid() != 0 {
		kubeBedSkip(t, "the test bed's stand-in kubelet runs pods in namespaces of their own, which needs root")
	}
	for _, b := range []string{"Xvfb", "dbus-daemon", "openbox"} {
		if _, err := exec.LookPath(b); err != nil {
			kubeBedSkip(t, "%s is not installed: the guest pods' desktops need it", b)
		}
	}
	dir := t.TempDir()
	// The pods' command "proctor" is this test binary. Each pod has a
	// /tmp of its own, where the binary cannot be: it goes beside the
	// bed's binaries for the test's time.
	podBin, err := os.MkdirTemp(filepath.Dir(bin), "pods-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(podBin) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(podBin, "proctor.test")
	if err := os.Link(self, test); err != nil {
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(test, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\nPROCTOR_TEST_MAIN=\"$*\" exec %s -test.run=^$\n", test)
	if err := os.WriteFile(filepath.Join(podBin, "proctor"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "kubebed"), "--dir", dir, "--bin", bin, "--nodes", "2",
		"--path", podBin, "--images", "proctor-guest:latest", "--node-memory", "8Gi")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if kc, ok := strings.CutPrefix(sc.Text(), "ready KUBECONFIG="); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return kc
		}
	}
	t.Fatalf("the test bed did not start: see %s", filepath.Join(dir, "logs"))
	return ""
}

// kubeBedBinaries returns the folder of the test bed's binaries:
// $PROCTOR_KUBEBED_BIN, or the one tools/kubebed/build.sh cached for the
// module as it is.
func kubeBedBinaries() (string, error) {
	bin := os.Getenv("PROCTOR_KUBEBED_BIN")
	if bin == "" {
		out, err := exec.Command("../../tools/kubebed/build.sh", "--cached").Output()
		if err != nil {
			return "", errors.New("the Kubernetes test bed's binaries are not built (run tools/kubebed/build.sh, or set PROCTOR_KUBEBED to a running bed's kubeconfig)")
		}
		bin = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(filepath.Join(bin, "kubebed")); err != nil {
		return "", fmt.Errorf("the Kubernetes test bed's binaries are not in %s: %w", bin, err)
	}
	return bin, nil
}

// kubeBedSkip skips the test for want of a test bed, or fails it where
// the bed must run: under CI, or when scripts/test.sh built it.
func kubeBedSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" || os.Getenv("PROCTOR_KUBEBED_BIN") != "" {
		t.Fatalf("the Kubernetes test bed must run here (CI=true or PROCTOR_KUBEBED_BIN set): "+format, args...)
	}
	t.Skipf(format, args...)
}

// leftovers counts the pods and secrets that runs left in the namespace.
func leftovers(t *testing.T, c *kube.Cluster) (pods, secrets int) {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: kube.ManagedSelector()}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := c.Client.CoreV1().Secrets(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	// A deleted pod stays, terminating, for its grace period.
	for _, p := range pl.Items {
		if p.DeletionTimestamp == nil {
			pods++
		}
	}
	return pods, len(sl.Items)
}

// TestKubeBed runs the kube provider against a real API server and
// scheduler with stand-in nodes: tasks validate on guest pods reached
// through port-forward, the failures come back in Kubernetes' words, and
// nothing is left behind.
func TestKubeBed(t *testing.T) {
	_, c := bedClient(t)

	t.Run("validate", func(t *testing.T) {
		out, errOut, code := runCLI(t, "", "validate", "../../testdata/runner", "--env", "kube://default?pods=2&wait=90s",
			"--filter", "^(shell-write|count-lines|dialog-later)$")
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
		if code != 0 {
			t.Fatalf("validate through kube:// exited %d", code)
		}
		if !strings.Contains(out+errOut, "3 tasks, 12 trajectories, 0 violations") || !strings.Contains(errOut, "2 pods Ready in namespace default") {
			t.Errorf("the validation does not show 3 tasks validated on 2 guest pods")
		}
		if p, s := leftovers(t, c); p != 0 || s != 0 {
			t.Errorf("the run left %d pods and %d secrets", p, s)
		}
	})

	for _, tt := range []struct {
		name, spec, want string
	}{
		{"an image that does not exist", "kube://default?pods=2&image=proctor-guest:nope&wait=60s", `: ErrImagePull: failed to pull and unpack image "proctor-guest:nope"`},
		{"requests no node can meet", "kube://default?pods=1&memory=64Gi&wait=3s", ": Unschedulable: not Ready within 3s: 0/2 nodes are available: 2 Insufficient memory."},
		// The guest's desktop does not fit in 16 MiB: the stand-in
		// kubelet's cgroup holds the limit and the kernel kills for it.
		{"a pod killed for memory", "kube://default?pods=1&memory=16Mi&wait=60s", ": OOMKilled: the container ended with exit code 137 after using all the memory its limit allows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, "", "validate", "../../testdata/runner", "--env", tt.spec, "--filter", "^shell-write$")
			if code == 0 {
				t.Fatal("validate succeeded")
			}
			if !strings.Contains(errOut, "pod default/proctor-") || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "the run's pods were removed") {
				t.Errorf("the error does not name the pod and say %q:\n%s", tt.want, errOut)
			}
			if p, s := leftovers(t, c); p != 0 || s != 0 {
				t.Errorf("the refused run left %d pods and %d secrets", p, s)
			}
		})
	}

	// A container that fails with an exit code says why: the kubelet
	// puts the end of its log in its status (the guest pods ask for that
	// with FallbackToLogsOnError), and the error quotes it.
	t.Run("a container that fails", func(t *testing.T) {
		ctx := context.Background()
		pods := c.Client.CoreV1().Pods(c.Namespace)
		p, err := pods.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "proctor-test-fails"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "guest", Image: kube.DefaultImage,
				Command:                  []string{"sh", "-c", "echo starting; echo 'guest: no display: Xvfb ended' >&2; exit 3"},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		var f *kube.PodError
		for range 600 {
			if p, err = pods.Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if f = kube.PodFailure(p); f != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if f == nil {
			t.Fatalf("the pod did not end in a minute: %+v", p.Status)
		}
		if want := "Error: the container ended with exit code 3: starting\nguest: no display: Xvfb ended"; !strings.Contains(f.Error(), want) {
			t.Errorf("the pod's failure: %v\nwant it to say %q", f, want)
		}
	})

	t.Run("clean", func(t *testing.T) {
		// What a killed run leaves: its secret and pods.
		r, err := kube.NewRun()
		if err != nil {
			t.Fatal(err)
		}
		s, err := kube.ParseSpec("default?pods=2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Make(context.Background(), r, s); err != nil {
			t.Fatal(err)
		}
		if p, s := leftovers(t, c); p != 2 || s != 1 {
			t.Fatalf("made %d pods and %d secrets, want 2 and 1", p, s)
		}
		out, errOut, code := runCLI(t, "", "kube", "clean", "--run", r.ID, "--namespace", "default")
		if code != 0 || !strings.Contains(out, "deleted 2 pods and 1 secrets in namespace default") {
			t.Fatalf("kube clean exited %d: %s%s", code, out, errOut)
		}
		if p, s := leftovers(t, c); p != 0 || s != 0 {
			t.Errorf("kube clean left %d pods and %d secrets", p, s)
		}
	})
}

// startProctor starts this test binary as proctor with args (no spaces in
// any) and returns it with its stderr and stdout merged, line by line.
func startProctor(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PROCTOR_TEST_MAIN="+strings.Join(args, " "))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		r.Close()
	})
	return cmd, bufio.NewScanner(r)
}

// runLeftovers counts the pods (not terminating) and secrets of one run.
func runLeftovers(t *testing.T, c *kube.Cluster, id string) (pods, secrets int) {
	pods, _, secrets = runObjects(t, c, id)
	return pods, secrets
}

// runObjectsLeft counts every pod (terminating ones too) and secret with
// the run's label.
func runObjectsLeft(t *testing.T, c *kube.Cluster, id string) int {
	pods, terminating, secrets := runObjects(t, c, id)
	return pods + terminating + secrets
}

// runObjects counts the pods with the run's label, those not terminating
// and those terminating, and its secrets.
func runObjects(t *testing.T, c *kube.Cluster, id string) (pods, terminating, secrets int) {
	t.Helper()
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: (&kube.Run{ID: id}).Selector()}
	pl, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	sl, err := c.Client.CoreV1().Secrets(c.Namespace).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pl.Items {
		if p.DeletionTimestamp == nil {
			pods++
		} else {
			terminating++
		}
	}
	return pods, terminating, len(sl.Items)
}

// readyRun reads the run's lines until the provider says its pods are
// Ready, and returns the run's id.
func readyRun(t *testing.T, sc *bufio.Scanner, lines *[]string) string {
	t.Helper()
	for sc.Scan() {
		*lines = append(*lines, sc.Text())
		if _, after, ok := strings.Cut(sc.Text(), "kube: run "); ok {
			id, _, _ := strings.Cut(after, ":")
			return id
		}
	}
	t.Fatalf("proctor ended before its pods were Ready:\n%s", strings.Join(*lines, "\n"))
	return ""
}

// TestKubeBedRunLosesPods deletes a guest pod while a run is under way on
// the test bed: the run records every episode once, none of them as a
// failure of the task, names the deleted pod and Kubernetes' reason among
// its lost environments, and leaves nothing on the cluster when it ends.
// Then a run killed with SIGKILL leaves its pods and secret, and proctor
// kube clean --run removes them all.
func TestKubeBedRunLosesPods(t *testing.T) {
	_, c := bedClient(t)
	ctx := context.Background()

	t.Run("a pod deleted mid-run", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		cmd, sc := startProctor(t, "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pods=3&wait=90s",
			"--filter", "^(shell-write|count-lines)$", "--repeat", "8", "--parallel", "3", "--out", out)
		var lines []string
		id := readyRun(t, sc, &lines)
		// Once an episode has ended the pods are busy with the others:
		// the first pod is deleted under its episode.
		victim := (&kube.Run{ID: id}).PodName(1)
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
		err := cmd.Wait()
		log := strings.Join(lines, "\n")
		t.Logf("proctor run:\n%s", log)
		if err != nil || !deleted {
			t.Fatalf("the run exited with %v (pod deleted: %v)", err, deleted)
		}
		if want := "lost environment kube default/" + victim + ": "; !strings.Contains(log, want) || !strings.Contains(log, "pod default/"+victim+": Deleted") {
			t.Errorf("the run does not say that %s was lost as Deleted", victim)
		}
		rep, errOut, code := runCLI(t, "", "report", out)
		t.Logf("proctor report:\n%s%s", rep, errOut)
		if code != 0 {
			t.Fatalf("report exited %d", code)
		}
		for _, want := range []string{"Lost environments (run): 1", "kube default/" + victim, ": Deleted", "episodes                     16", "error                        0 (0.0%)", "success rate                 100.0%"} {
			if !strings.Contains(rep, want) {
				t.Errorf("the report does not say %q", want)
			}
		}
		if p, s := runLeftovers(t, c, id); p != 0 || s != 0 {
			t.Errorf("the run left %d pods and %d secrets", p, s)
		}
	})

	t.Run("a run killed with SIGKILL, then kube clean", func(t *testing.T) {
		cmd, sc := startProctor(t, "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pods=2&wait=90s",
			"--filter", "^shell-write$", "--repeat", "50", "--out", filepath.Join(t.TempDir(), "run"))
		var lines []string
		id := readyRun(t, sc, &lines)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if p, s := runLeftovers(t, c, id); p != 2 || s != 1 {
			t.Fatalf("the killed run left %d pods and %d secrets, want its 2 and 1", p, s)
		}
		out, errOut, code := runCLI(t, "", "kube", "clean", "--run", id, "--namespace", "default")
		if code != 0 || !strings.Contains(out, "deleted 2 pods and 1 secrets in namespace default") {
			t.Fatalf("kube clean exited %d: %s%s", code, out, errOut)
		}
		if p, s := runLeftovers(t, c, id); p != 0 || s != 0 {
			t.Errorf("kube clean left %d pods and %d secrets of run %s", p, s, id)
		}
	})
}

// bedClient starts or reuses the test bed, points $KUBECONFIG at it for
// the test, and connects to its default namespace.
func bedClient(t *testing.T) (kubeconfig string, c *kube.Cluster) {
	t.Helper()
	kc := kubeBed(t)
	t.Setenv("KUBECONFIG", kc)
	c, err := kube.Connect("", "default")
	if err != nil {
		t.Fatal(err)
	}
	return kc, c
}
