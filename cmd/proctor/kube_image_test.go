package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/proctor-eval/proctor/env/kube"
)

// kubeBedImage returns the guest image the podman test bed runs
// ($PROCTOR_KUBEBED_IMAGE, default localhost/proctor-guest:latest, as
// images/guest/build.sh -t names it) and whether it was asked for.
func kubeBedImage() (string, bool) {
	if img := os.Getenv("PROCTOR_KUBEBED_IMAGE"); img != "" {
		return img, true
	}
	return "localhost/proctor-guest:latest", false
}

// kubeBedPodman starts a test bed whose two stand-in nodes run pods as
// podman containers of images in podman's store, and returns its
// kubeconfig and the guest image. Without podman or the image it skips
// the test, or fails it where the image was asked for
// ($PROCTOR_KUBEBED_IMAGE): building the image takes minutes and about
// 800 MB, which scripts/test.sh does not spend.
func kubeBedPodman(t *testing.T) (string, string) {
	t.Helper()
	image, asked := kubeBedImage()
	skip := func(format string, args ...any) {
		t.Helper()
		if asked {
			t.Fatalf("PROCTOR_KUBEBED_IMAGE=%s is set: "+format, append([]any{image}, args...)...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("podman"); err != nil {
		skip("podman is not installed: the podman runner needs it (apt-get install podman runc)")
	}
	if out, err := exec.Command("podman", "image", "exists", image).CombinedOutput(); err != nil {
		skip("the guest image %s is not in podman's store (images/guest/build.sh -t %s makes it): %v %s", image, image, err, out)
	}
	bin, err := kubeBedBinaries()
	if err != nil {
		kubeBedSkip(t, "%v", err)
	}
	if os.Geteuid() != 0 {
		kubeBedSkip(t, "the test bed's stand-in kubelet runs pods in namespaces of their own, which needs root")
	}
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "kubebed"), "--dir", dir, "--bin", bin, "--nodes", "2",
		"--runner", "podman", "--node-memory", "8Gi")
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
			return kc, image
		}
	}
	t.Fatalf("the test bed did not start: see %s", filepath.Join(dir, "logs"))
	return "", ""
}

// TestKubeBedImage validates tasks on guest pods that are containers of
// the guest image (the stand-in kubelet's podman runner), and shows an
// image the node does not have failing to pull in podman's words, and a
// container over its memory limit reported OOMKilled.
func TestKubeBedImage(t *testing.T) {
	kc, image := kubeBedPodman(t)
	t.Setenv("KUBECONFIG", kc)
	c, err := kube.Connect("", "default")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("validate", func(t *testing.T) {
		out, errOut, code := runCLI(t, "", "validate", "../../testdata/runner", "--env", "kube://default?pods=2&wait=120s&image="+image,
			"--filter", "^(shell-write|count-lines)$")
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
		if code != 0 {
			t.Fatalf("validate through kube:// with pods from %s exited %d", image, code)
		}
		if !strings.Contains(out+errOut, "2 tasks, 8 trajectories, 0 violations") || !strings.Contains(errOut, "2 pods Ready in namespace default") {
			t.Errorf("the validation does not show 2 tasks validated on 2 guest pods")
		}
		if p, s := leftovers(t, c); p != 0 || s != 0 {
			t.Errorf("the run left %d pods and %d secrets", p, s)
		}
	})

	for _, tt := range []struct {
		name, spec, want string
	}{
		{"an image the node does not have", "kube://default?pods=1&wait=60s&image=localhost/proctor-guest:nope",
			": ErrImagePull: podman image: inspecting object: localhost/proctor-guest:nope: image not known"},
		// The container's desktop does not fit in 16 MiB: the pod's
		// cgroup, the container's parent, holds the limit.
		{"a pod killed for memory", "kube://default?pods=1&memory=16Mi&wait=60s&image=" + image,
			": OOMKilled: the container ended with exit code 137 after using all the memory its limit allows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, "", "validate", "../../testdata/runner", "--env", tt.spec, "--filter", "^shell-write$")
			t.Logf("stderr:\n%s", errOut)
			if code == 0 {
				t.Fatal("validate succeeded")
			}
			if !strings.Contains(errOut, "pod default/proctor-") || !strings.Contains(errOut, tt.want) {
				t.Errorf("the error does not name the pod and say %q", tt.want)
			}
			if p, s := leftovers(t, c); p != 0 || s != 0 {
				t.Errorf("the refused run left %d pods and %d secrets", p, s)
			}
		})
	}
}
