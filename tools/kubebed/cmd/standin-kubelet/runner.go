package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// processRunner runs each pod's first container as a local process, or
// with podman set as a container of an image in podman's store.
type processRunner struct {
	client kubernetes.Interface
	dir    string
	path   string
	images []string // empty: every image
	host   string   // the node's address, the pods' host IP
	podman *podman  // nil: pods run as processes

	mu     sync.Mutex
	pods   map[string]*podProc
	notify func(*corev1.Pod)
}

// podProc is one pod and its process.
type podProc struct {
	mu   sync.Mutex
	pod  *corev1.Pod // status kept here
	cmd  *exec.Cmd   // nil: not started
	dir  string
	done chan struct{} // closed when the process has ended
	stop context.CancelFunc
	cg   *memCgroup // nil: no memory limit
	oom  bool       // the OOM killer ended a process of the pod

	ctr string // the pod's podman container; "" for a process pod
	pid int    // the container's first process (its namespaces are the pod's)
}

// nsPid is the process whose namespaces are the pod's, 0 if none runs.
func (p *podProc) nsPid() int {
	switch {
	case p.ctr != "":
		return p.pid
	case p.cmd != nil:
		return p.cmd.Process.Pid
	}
	return 0
}

func key(ns, name string) string { return ns + "/" + name }

func (r *processRunner) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	r.mu.Lock()
	r.notify = f
	r.mu.Unlock()
}

// publish sends the pod's current state to the pod controller.
func (r *processRunner) publish(p *podProc) {
	p.mu.Lock()
	pod := p.pod.DeepCopy()
	p.mu.Unlock()
	r.mu.Lock()
	f := r.notify
	r.mu.Unlock()
	if f != nil {
		f(pod)
	}
}

func (r *processRunner) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	pod = pod.DeepCopy()
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase:     corev1.PodPending,
		HostIP:    r.host,
		HostIPs:   []corev1.HostIP{{IP: r.host}},
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: now},
		},
	}
	if len(pod.Spec.Containers) == 0 {
		return errdefs.InvalidInput("a pod without containers")
	}
	pctx, stop := context.WithCancel(context.Background())
	p := &podProc{pod: pod, dir: filepath.Join(r.dir, pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)),
		done: make(chan struct{}), stop: stop}
	c := pod.Spec.Containers[0]
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: c.Name, Image: c.Image, ImageID: c.Image}}
	// The pod is set up before others see it; then its goroutines change
	// it under p.mu.
	run := r.probe
	switch {
	case len(r.images) > 0 && !slices.Contains(r.images, c.Image):
		msg := fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: not found", c.Image, c.Image)
		run = func(ctx context.Context, p *podProc) { r.failPull(ctx, p, c.Image, msg) }
	case r.podman != nil:
		if msg := r.podman.missing(ctx, c.Image); msg != "" {
			run = func(ctx context.Context, p *podProc) { r.failPull(ctx, p, c.Image, msg) }
			break
		}
		fallthrough
	default:
		start := r.start
		if r.podman != nil {
			start = r.startContainer
		}
		if err := start(ctx, p); err != nil {
			pod.Status.Phase = corev1.PodFailed
			pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 128, Reason: "StartError", Message: err.Error(), FinishedAt: metav1.Now()}}
			close(p.done)
			log.Printf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
			run = func(context.Context, *podProc) { r.publish(p) }
		}
	}
	r.mu.Lock()
	r.pods[key(pod.Namespace, pod.Name)] = p
	r.mu.Unlock()
	go run(pctx, p)
	return nil
}

// failPull plays a node that cannot pull the image: ErrImagePull, then
// ImagePullBackOff, with the message of the container runtime, msg.
func (r *processRunner) failPull(ctx context.Context, p *podProc, image, msg string) {
	for i, reason := range []string{"ErrImagePull", "ImagePullBackOff"} {
		if i > 0 {
			msg = fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, msg)
		}
		p.mu.Lock()
		p.pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
		p.mu.Unlock()
		r.publish(p)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// volumes materialises the pod's volumes under its folder and returns
// their folders by name.
func (r *processRunner) volumes(ctx context.Context, p *podProc) (map[string]string, error) {
	pod := p.pod
	if err := os.MkdirAll(filepath.Join(p.dir, "volumes"), 0o700); err != nil {
		return nil, err
	}
	vols := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		d := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		vols[v.Name] = d
		switch {
		case v.Secret != nil:
			s, err := r.client.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: secret %s: %w", v.Name, v.Secret.SecretName, err)
			}
			mode := os.FileMode(0o644)
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
			for k, b := range s.Data {
				if err := os.WriteFile(filepath.Join(d, k), b, mode); err != nil {
					return nil, err
				}
			}
		case v.ConfigMap != nil:
			cm, err := r.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: config map %s: %w", v.Name, v.ConfigMap.Name, err)
			}
			for k, s := range cm.Data {
				if err := os.WriteFile(filepath.Join(d, k), []byte(s), 0o644); err != nil {
					return nil, err
				}
			}
		case v.EmptyDir != nil:
		default:
			return nil, fmt.Errorf("volume %s: only secret, configMap and emptyDir volumes are supported", v.Name)
		}
	}
	return vols, nil
}

// start materialises the pod's volumes and starts its process.
func (r *processRunner) start(ctx context.Context, p *podProc) error {
	pod := p.pod
	c := pod.Spec.Containers[0]
	vols, err := r.volumes(ctx, p)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{podInitArg}
	// The container's memory limit, in a cgroup of the pod's own.
	if lim := c.Resources.Limits.Memory(); !lim.IsZero() {
		// Where no cgroup can be made the pod runs without its limit,
		// and the log says so.
		cg, err := newMemCgroup("pod-"+string(pod.UID), lim.Value())
		switch {
		case err != nil:
			log.Printf("pod %s/%s: runs without its memory limit %s: %v", pod.Namespace, pod.Name, lim, err)
		default:
			p.cg = cg
			args = append(args, "--cgroup", cg.dir)
		}
	}
	for _, m := range c.VolumeMounts {
		src, ok := vols[m.Name]
		if !ok {
			return fmt.Errorf("mount of unknown volume %s", m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
		}
		spec := src + ":" + m.MountPath
		if m.ReadOnly {
			spec += ":ro"
		}
		args = append(args, "--mount", spec)
	}
	if c.WorkingDir != "" {
		args = append(args, "--workdir", c.WorkingDir)
	}
	// The environment: the container's variables (the pod controller has
	// resolved those from secrets and the downward API), and a PATH.
	envMap := map[string]string{}
	env := []string{"PATH=" + r.path + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
		"HOSTNAME=" + pod.Name}
	for _, e := range c.Env {
		envMap[e.Name] = e.Value
		env = append(env, e.Name+"="+e.Value)
	}
	mapping := expansion.MappingFuncFor(envMap)
	command := append(slices.Clone(c.Command), c.Args...)
	if len(command) == 0 {
		return fmt.Errorf("container %s has no command: the process runner needs one (it does not read images)", c.Name)
	}
	for i, a := range command {
		command[i] = expansion.Expand(a, mapping)
	}
	args = append(append(args, "--"), command...)
	logf, err := os.Create(filepath.Join(p.dir, "log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(self, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL, // a node that dies takes its pods with it
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		if p.cg != nil {
			p.cg.remove()
		}
		return err
	}
	logf.Close()
	now := metav1.Now()
	p.cmd = cmd
	pod.Status.Phase = corev1.PodRunning
	pod.Status.PodIP = "127.0.0.1"
	pod.Status.PodIPs = []corev1.PodIP{{IP: "127.0.0.1"}}
	pod.Status.ContainerStatuses[0].Started = new(true)
	pod.Status.ContainerStatuses[0].ContainerID = "process://" + strconv.Itoa(cmd.Process.Pid)
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	go r.wait(p)
	if p.cg != nil {
		go r.watchMemory(p)
	}
	return nil
}

// watchMemory ends the whole pod when the OOM killer has ended one of its
// processes, as a kubelet does (memory.oom.group): a pod that lost a
// process to its limit is not left half running.
func (r *processRunner) watchMemory(p *podProc) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		if p.cg.oomKills() > 0 {
			p.mu.Lock()
			p.oom = true
			p.mu.Unlock()
			log.Printf("pod %s/%s: a process was killed for memory (limit %s): ending the pod", p.pod.Namespace, p.pod.Name,
				p.pod.Spec.Containers[0].Resources.Limits.Memory())
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			p.cg.killAll()
			return
		}
	}
}

// wait waits for the pod's process and records how it ended.
func (r *processRunner) wait(p *podProc) {
	err := p.cmd.Wait()
	code, reason := 0, "Completed"
	if err != nil {
		reason = "Error"
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
				switch {
				case ws.Signaled():
					code = 128 + int(ws.Signal())
				default:
					code = ws.ExitStatus()
				}
			}
		}
	}
	p.mu.Lock()
	if p.cg != nil && (p.oom || p.cg.oomKills() > 0) {
		// Killed for memory: the kernel's SIGKILL, or the pod's end
		// after it killed one of its processes.
		code, reason = 137, "OOMKilled"
	}
	p.mu.Unlock()
	if p.cg != nil {
		// Processes that left the pod's group are in its cgroup still.
		p.cg.killAll()
		p.cg.removeWait()
	}
	var msg string
	if code != 0 && fallbackToLogs(p.pod) {
		if f, err := os.Open(filepath.Join(p.dir, "log")); err == nil {
			msg = logTail(f)
			f.Close()
		}
	}
	r.finish(p, code, reason, msg)
}

// fallbackToLogs reports whether the pod's container asks for the end of
// its log as the message of a failed end (FallbackToLogsOnError): a
// process writes no termination message here.
func fallbackToLogs(pod *corev1.Pod) bool {
	return len(pod.Spec.Containers) > 0 && pod.Spec.Containers[0].TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError
}

// logTail is the end of a container's log as the kubelet keeps it for a
// termination message: the last 80 lines, at most 2048 bytes.
func logTail(r io.Reader) string {
	const maxBytes, maxLines = 2048, 80
	if f, ok := r.(io.Seeker); ok {
		if end, err := f.Seek(0, io.SeekEnd); err == nil {
			f.Seek(max(0, end-maxBytes), io.SeekStart)
		}
	}
	var ring []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		ring = append(ring, chunk[:n]...)
		if len(ring) > maxBytes {
			ring = append(ring[:0], ring[len(ring)-maxBytes:]...)
		}
		if err != nil {
			break
		}
	}
	lines := strings.Split(strings.TrimRight(string(ring), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-maxLines):], "\n")
}

// finish records the end of the pod's container, with its exit code and
// reason, and publishes it.
// msg is the container's termination message ("": none).
func (r *processRunner) finish(p *podProc, code int, reason, msg string) {
	p.mu.Lock()
	st := &p.pod.Status
	started := metav1.Now()
	if run := st.ContainerStatuses[0].State.Running; run != nil {
		started = run.StartedAt
	}
	st.ContainerStatuses[0].Ready = false
	st.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: int32(code), Reason: reason, Message: msg, StartedAt: started, FinishedAt: metav1.Now(),
		ContainerID: st.ContainerStatuses[0].ContainerID}}
	if code == 0 {
		st.Phase = corev1.PodSucceeded
	} else {
		st.Phase = corev1.PodFailed
	}
	setReady(st, false)
	p.mu.Unlock()
	close(p.done)
	p.stop()
	r.publish(p)
}

// probe runs the readiness probe of the pod's container (a TCP or HTTP
// probe counts as passed when its port accepts a connection); with none,
// the pod is Ready once started.
func (r *processRunner) probe(ctx context.Context, p *podProc) {
	c := p.pod.Spec.Containers[0]
	pr := c.ReadinessProbe
	if pr == nil {
		p.mu.Lock()
		setReady(&p.pod.Status, true)
		p.mu.Unlock()
		r.publish(p)
		return
	}
	var port int
	switch {
	case pr.TCPSocket != nil:
		port = portOf(c, pr.TCPSocket.Port.IntValue(), pr.TCPSocket.Port.StrVal)
	case pr.HTTPGet != nil:
		port = portOf(c, pr.HTTPGet.Port.IntValue(), pr.HTTPGet.Port.StrVal)
	}
	period := time.Duration(max(pr.PeriodSeconds, 1)) * time.Second
	threshold := int(max(pr.FailureThreshold, 1))
	r.publish(p)
	select {
	case <-ctx.Done():
		return
	case <-time.After(time.Duration(pr.InitialDelaySeconds) * time.Second):
	}
	ready, failures := false, 0
	for {
		ok := false
		if port > 0 {
			dctx, cancel := context.WithTimeout(ctx, time.Duration(max(pr.TimeoutSeconds, 1))*time.Second)
			conn, err := dialIn(dctx, p.nsPid(), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			cancel()
			if err == nil {
				conn.Close()
				ok = true
			}
		}
		switch {
		case ok:
			failures = 0
		default:
			failures++
		}
		if ok != ready && (ok || failures >= threshold) {
			ready = ok
			p.mu.Lock()
			setReady(&p.pod.Status, ready)
			p.mu.Unlock()
			r.publish(p)
		}
		// Until the first success, look often: pods start in well under
		// a second here.
		wait := period
		if !ready {
			wait = min(period, 200*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// portOf resolves a probe's port, a number or a container port's name.
func portOf(c corev1.Container, n int, name string) int {
	if name == "" {
		return n
	}
	for _, p := range c.Ports {
		if p.Name == name {
			return int(p.ContainerPort)
		}
	}
	return 0
}

func setReady(st *corev1.PodStatus, ready bool) {
	v := corev1.ConditionFalse
	if ready {
		v = corev1.ConditionTrue
	}
	for i := range st.Conditions {
		if t := st.Conditions[i].Type; (t == corev1.PodReady || t == corev1.ContainersReady) && st.Conditions[i].Status != v {
			st.Conditions[i].Status = v
			st.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	for i := range st.ContainerStatuses {
		st.ContainerStatuses[i].Ready = ready
	}
}

func (r *processRunner) UpdatePod(context.Context, *corev1.Pod) error { return nil }

// DeletePod stops the pod's process: SIGTERM to its process group, then
// SIGKILL after the grace period.
func (r *processRunner) DeletePod(_ context.Context, pod *corev1.Pod) error {
	k := key(pod.Namespace, pod.Name)
	r.mu.Lock()
	p, ok := r.pods[k]
	if ok {
		delete(r.pods, k)
	}
	r.mu.Unlock()
	if !ok {
		return errdefs.NotFound("pod " + k + " is not on this node")
	}
	grace := int64(30)
	if pod.DeletionGracePeriodSeconds != nil {
		grace = *pod.DeletionGracePeriodSeconds
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	r.kill(p, time.Duration(grace)*time.Second)
	p.mu.Lock()
	st := &p.pod.Status
	if st.Phase == corev1.PodPending || st.Phase == corev1.PodRunning {
		st.Phase = corev1.PodFailed
		st.Reason = "Terminated"
		st.Message = "the pod was deleted"
	}
	for i := range st.ContainerStatuses {
		if st.ContainerStatuses[i].State.Terminated == nil {
			st.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "ContainerStatusUnknown", FinishedAt: metav1.Now()}}
		}
	}
	now := metav1.Now()
	p.pod.DeletionTimestamp = &now
	p.pod.DeletionGracePeriodSeconds = pod.DeletionGracePeriodSeconds
	p.mu.Unlock()
	r.publish(p)
	// The log stays, for whoever looks into a pod that failed.
	os.RemoveAll(filepath.Join(p.dir, "volumes"))
	return nil
}

// kill ends a pod's process within grace.
func (r *processRunner) kill(p *podProc, grace time.Duration) {
	p.stop()
	if p.ctr != "" {
		r.podman.stop(p.ctr, grace)
		<-p.done
		return
	}
	if p.cmd == nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	// What the pod's process left behind in its group.
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// killAll stops every pod, when the node stops.
func (r *processRunner) killAll() {
	r.mu.Lock()
	pods := r.pods
	r.pods = map[string]*podProc{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Go(func() { r.kill(p, 2*time.Second) })
	}
	wg.Wait()
}

func (r *processRunner) get(ns, name string) (*podProc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pods[key(ns, name)]
	if !ok {
		return nil, errdefs.NotFound("pod " + key(ns, name) + " is not on this node")
	}
	return p, nil
}

func (r *processRunner) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	p, err := r.get(ns, name)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pod.DeepCopy(), nil
}

func (r *processRunner) GetPodStatus(ctx context.Context, ns, name string) (*corev1.PodStatus, error) {
	pod, err := r.GetPod(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

func (r *processRunner) GetPods(context.Context) ([]*corev1.Pod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range r.pods {
		p.mu.Lock()
		out = append(out, p.pod.DeepCopy())
		p.mu.Unlock()
	}
	return out, nil
}

func (r *processRunner) GetContainerLogs(ctx context.Context, ns, name, _ string, _ api.ContainerLogOpts) (io.ReadCloser, error) {
	p, err := r.get(ns, name)
	if err != nil {
		return nil, err
	}
	if p.ctr != "" {
		return r.podman.logs(ctx, p.ctr)
	}
	return os.Open(filepath.Join(p.dir, "log"))
}

// RunInContainer runs a command in the pod's namespaces (nsenter).
func (r *processRunner) RunInContainer(ctx context.Context, ns, name, _ string, command []string, attach api.AttachIO) error {
	p, err := r.get(ns, name)
	if err != nil {
		return err
	}
	if p.ctr != "" {
		return r.podman.exec(ctx, p.ctr, command, attach)
	}
	if p.cmd == nil {
		return errdefs.InvalidInput("the pod's container is not running")
	}
	args := append([]string{"-t", strconv.Itoa(p.cmd.Process.Pid), "-n", "-m", "--"}, command...)
	cmd := exec.CommandContext(ctx, "nsenter", args...)
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

func (r *processRunner) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errdefs.InvalidInput("attach is not supported by the process runner")
}

func (r *processRunner) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{}, nil
}

func (r *processRunner) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, nil
}

// PortForward connects stream to port inside the pod's network
// namespace, as a container runtime does.
func (r *processRunner) PortForward(ctx context.Context, ns, name string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	p, err := r.get(ns, name)
	if err != nil {
		return err
	}
	if p.nsPid() == 0 {
		return errdefs.InvalidInput("the pod's container is not running")
	}
	conn, err := dialIn(ctx, p.nsPid(), net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("port-forward to %s port %d: %w", key(ns, name), port, err)
	}
	defer conn.Close()
	errc := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stream)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		errc <- err
	}()
	go func() {
		_, err := io.Copy(stream, conn)
		errc <- err
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	return err
}
