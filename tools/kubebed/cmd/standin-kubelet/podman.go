package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"

	"golang.org/x/sys/unix"
)

// podman runs pods as containers of the images in podman's local store
// (none is pulled: an image not there fails to pull with podman's own
// message). Each container runs with runc, in a network namespace of its
// own that has only its loopback (no bridge: the pod is reached inside
// its namespace, as a process pod is, by its probes and port-forwards),
// under the pod's memory cgroup (--cgroup-parent), which holds the pod's
// limit, and with its rlimits given: runc's defaults are above what a
// node without CAP_SYS_RESOURCE may set.
type podman struct {
	bin     string
	ulimits []string // podman run's --ulimit options
}

// podmanNproc is the most processes podman's conmon, the parent of a
// container's first process, runs with: runc cannot raise the limit
// above it ("error setting rlimit type 6: operation not permitted").
const podmanNproc = 32768

// newPodman finds podman and the rlimits its containers get: this
// process's own hard limits.
func newPodman() (*podman, error) {
	bin, err := exec.LookPath("podman")
	if err != nil {
		return nil, fmt.Errorf("the podman runner needs podman: %w", err)
	}
	var nofile, nproc unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile); err != nil {
		return nil, err
	}
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &nproc); err != nil {
		return nil, err
	}
	np := min(nproc.Max, podmanNproc)
	return &podman{bin: bin, ulimits: []string{
		"--ulimit", fmt.Sprintf("nofile=%d:%d", nofile.Max, nofile.Max),
		"--ulimit", fmt.Sprintf("nproc=%d:%d", np, np),
	}}, nil
}

// run runs podman with args and returns its standard output; an error
// carries podman's message.
func (pm *podman) run(ctx context.Context, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, pm.bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimPrefix(strings.TrimSpace(errb.String()), "Error: ")
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), fmt.Errorf("podman %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// missing returns podman's message when image is not in its store, ""
// when it is.
func (pm *podman) missing(ctx context.Context, image string) string {
	if _, err := pm.run(ctx, "image", "inspect", "--format", "{{.Id}}", image); err != nil {
		return err.Error()
	}
	return ""
}

// containerName is the pod's container's name in podman.
func containerName(pod *corev1.Pod) string {
	uid := string(pod.UID)
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return "k8s_" + pod.Namespace + "_" + pod.Name + "_" + uid
}

// containerArgs returns podman run's arguments for the pod's first
// container (without the memory cgroup), and the environment podman
// runs with: the container's variables are passed by name, so that their
// values are in no command line.
func containerArgs(pod *corev1.Pod, vols map[string]string, ulimits []string) ([]string, []string, error) {
	c := pod.Spec.Containers[0]
	args := []string{"run", "--detach", "--name", containerName(pod), "--runtime", "runc",
		"--network", "none", "--hostname", pod.Name, "--pull", "never"}
	args = append(args, ulimits...)
	for _, m := range c.VolumeMounts {
		src, ok := vols[m.Name]
		if !ok {
			return nil, nil, fmt.Errorf("mount of unknown volume %s", m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
		}
		spec := src + ":" + m.MountPath
		if m.ReadOnly {
			spec += ":ro"
		}
		args = append(args, "--volume", spec)
	}
	if c.WorkingDir != "" {
		args = append(args, "--workdir", c.WorkingDir)
	}
	env := os.Environ()
	envMap := map[string]string{}
	for _, e := range c.Env {
		envMap[e.Name] = e.Value
		env = append(env, e.Name+"="+e.Value)
		args = append(args, "--env", e.Name)
	}
	mapping := expansion.MappingFuncFor(envMap)
	expand := func(in []string) []string {
		out := slices.Clone(in)
		for i, a := range out {
			out[i] = expansion.Expand(a, mapping)
		}
		return out
	}
	// The container's command replaces the image's entrypoint and its
	// args the image's command, as in Kubernetes.
	if len(c.Command) > 0 {
		ep, err := json.Marshal(expand(c.Command))
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--entrypoint", string(ep))
	}
	args = append(args, c.Image)
	args = append(args, expand(c.Args)...)
	return args, env, nil
}

// startContainer materialises the pod's volumes and starts its container.
func (r *processRunner) startContainer(_ context.Context, p *podProc) error {
	pod := p.pod
	c := pod.Spec.Containers[0]
	// Not the request's context: its end must not cut podman short.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vols, err := r.volumes(ctx, p)
	if err != nil {
		return err
	}
	args, env, err := containerArgs(pod, vols, r.podman.ulimits)
	if err != nil {
		return err
	}
	if lim := c.Resources.Limits.Memory(); !lim.IsZero() {
		cg, err := newMemCgroup("pod-"+string(pod.UID), lim.Value())
		switch {
		case err != nil:
			log.Printf("pod %s/%s: runs without its memory limit %s: %v", pod.Namespace, pod.Name, lim, err)
		default:
			p.cg = cg
			args = slices.Insert(args, 1, "--cgroup-parent", cg.path())
		}
	}
	cmd := exec.CommandContext(ctx, r.podman.bin, args...)
	cmd.Env = env
	// conmon, which podman starts, keeps podman's working folder and
	// writes a file "oom" there when the container's first process is
	// killed for memory: the pod's folder.
	cmd.Dir = p.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		// What a failed run leaves.
		r.podman.run(ctx, "rm", "--force", "--time", "0", containerName(pod))
		if p.cg != nil {
			p.cg.removeWait()
		}
		return fmt.Errorf("podman run: %s", strings.TrimPrefix(strings.TrimSpace(errb.String()), "Error: "))
	}
	id := strings.TrimSpace(out.String())
	p.ctr = containerName(pod)
	pidStr, err := r.podman.run(ctx, "inspect", "--format", "{{.State.Pid}}", p.ctr)
	if err != nil {
		log.Printf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	p.pid, _ = strconv.Atoi(pidStr)
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = "127.0.0.1"
	pod.Status.PodIPs = []corev1.PodIP{{IP: "127.0.0.1"}}
	pod.Status.ContainerStatuses[0].Started = new(true)
	pod.Status.ContainerStatuses[0].ContainerID = "podman://" + id
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	if p.cg != nil {
		// As a kubelet does (memory.oom.group), a container that lost a
		// process to its limit is ended whole.
		err := p.cg.watchOOM(p.done, func() {
			p.mu.Lock()
			p.oom = true
			p.mu.Unlock()
			log.Printf("pod %s/%s: a process was killed for memory (limit %s): ending the pod", pod.Namespace, pod.Name, c.Resources.Limits.Memory())
			r.podman.run(context.Background(), "kill", "--signal", "KILL", p.ctr)
		})
		if err != nil {
			log.Printf("pod %s/%s: OOM kills will not be seen: %v", pod.Namespace, pod.Name, err)
		}
	}
	go r.waitContainer(p)
	return nil
}

// waitContainer waits for the pod's container to end, records how, and
// removes it.
func (r *processRunner) waitContainer(p *podProc) {
	ctx := context.Background()
	out, err := r.podman.run(ctx, "wait", p.ctr)
	code, werr := strconv.Atoi(out)
	if err != nil || werr != nil {
		log.Printf("pod %s/%s: podman wait: %v (%q)", p.pod.Namespace, p.pod.Name, err, out)
		code = 1
	}
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	oomKilled, _ := r.podman.run(ctx, "inspect", "--format", "{{.State.OOMKilled}}", p.ctr)
	p.mu.Lock()
	if p.oom || oomKilled == "true" || (p.cg != nil && p.cg.oomKills() > 0) {
		code, reason = 137, "OOMKilled"
	}
	p.mu.Unlock()
	var msg string
	if code != 0 && fallbackToLogs(p.pod) {
		if out, err := r.podman.logs(ctx, p.ctr); err == nil {
			msg = logTail(out)
		}
	}
	if _, err := r.podman.run(ctx, "rm", "--force", "--time", "0", p.ctr); err != nil {
		log.Printf("pod %s/%s: %v", p.pod.Namespace, p.pod.Name, err)
	}
	if p.cg != nil {
		p.cg.removeWait()
		if !p.cg.v2 {
			// podman made the same path in cgroup v1's other hierarchies.
			dirs, _ := filepath.Glob(filepath.Join(cgroupRoot, "*", p.cg.path()))
			for _, d := range dirs {
				(&memCgroup{dir: d}).removeWait()
			}
		}
	}
	r.finish(p, code, reason, msg)
}

// stop stops the container: SIGTERM, then SIGKILL after grace.
func (pm *podman) stop(name string, grace time.Duration) {
	secs := int((grace + time.Second - 1) / time.Second)
	if _, err := pm.run(context.Background(), "stop", "--time", strconv.Itoa(secs), name); err != nil {
		log.Printf("%v", err)
	}
}

// logs returns what the container wrote.
func (pm *podman) logs(ctx context.Context, name string) (io.ReadCloser, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, pm.bin, "logs", name)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("podman logs %s: %v: %s", name, err, out.String())
	}
	return io.NopCloser(&out), nil
}

// exec runs command in the container.
func (pm *podman) exec(ctx context.Context, name string, command []string, attach api.AttachIO) error {
	args := []string{"exec"}
	if attach.Stdin() != nil {
		args = append(args, "--interactive")
	}
	args = append(append(args, name), command...)
	cmd := exec.CommandContext(ctx, pm.bin, args...)
	cmd.Stdin = attach.Stdin()
	if w := attach.Stdout(); w != nil {
		defer w.Close()
		cmd.Stdout = w
	}
	if w := attach.Stderr(); w != nil {
		defer w.Close()
		cmd.Stderr = w
	}
	return cmd.Run()
}
