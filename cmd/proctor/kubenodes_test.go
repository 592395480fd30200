package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/proctor-eval/proctor/env/kube"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/viewer"
)

// TestKubeBedTwoNodes runs 200 episodes over 8 guest pods on the test
// bed's two stand-in nodes while two pods are deleted, at different
// moments, and one node is stopped as a machine goes down (its kubelet
// and every process of its pods killed). Nobody marks that node NotReady
// (no controller manager): the provider finds it gone by its lease. Every
// episode is recorded once, none as an error; every lost pod is in the
// run's lost environments with the episode it was lost under and
// Kubernetes' reason (Deleted, NodeLost naming the node), in the report
// and in the viewer, and was the fault of a retry of that episode; every
// retry is told with its episode and fault (a lost pod, or a transient
// one on a sound pod); replacements keep off the stopped node; nothing
// is left.
func TestKubeBedTwoNodes(t *testing.T) {
	kc, c := bedClient(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "run")
	// 2 tasks x 100 repeats; 512 MiB requests, so that the 8 pods and
	// their replacements fit on one node once the other is gone.
	cmd, sc := startProctor(t, "run", "../../testdata/runner", "--agent", "replay", "--env", "kube://default?pods=8&memory=512Mi&wait=90s",
		"--filter", "^(shell-write|count-lines)$", "--repeat", "100", "--parallel", "8", "--out", out)
	var lines []string
	id := readyRun(t, sc, &lines)
	run := &kube.Run{ID: id}
	pods := func() []corev1.Pod {
		l, err := c.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: run.Selector()})
		if err != nil {
			t.Fatal(err)
		}
		var live []corev1.Pod
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil {
				live = append(live, p)
			}
		}
		return live
	}
	byNode := map[string][]string{}
	for _, p := range pods() {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p.Name)
	}
	t.Logf("the run's pods by node: %v", byNode)
	if len(byNode["node-1"]) == 0 || len(byNode["node-2"]) == 0 {
		t.Fatalf("the scheduler did not spread the 8 pods over both nodes: %v", byNode)
	}
	// The two deleted pods are node-1's, so that each loss has one cause;
	// node-2 is stopped after them.
	var deleted []string
	var stopped []string // node-2's pods when it stopped
	results := 0
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !strings.HasPrefix(sc.Text(), "[") {
			continue
		}
		results++
		switch {
		case results == 5 || results == 40:
			live := pods()
			victim := ""
			for _, p := range live {
				if p.Spec.NodeName == "node-1" {
					victim = p.Name
					break
				}
			}
			if victim == "" {
				t.Fatalf("no pod of the run on node-1 to delete")
			}
			if err := c.Client.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{GracePeriodSeconds: new(int64(1))}); err != nil {
				t.Fatal(err)
			}
			deleted = append(deleted, victim)
			t.Logf("after %d episodes: deleted pod %s", results, victim)
		case results == 80:
			for _, p := range pods() {
				if p.Spec.NodeName == "node-2" {
					stopped = append(stopped, p.Name)
				}
			}
			stopNode(t, filepath.Dir(kc), "node-2")
			t.Logf("after %d episodes: stopped node-2 with pods %v", results, stopped)
		}
	}
	err := cmd.Wait()
	log := strings.Join(lines, "\n")
	t.Logf("proctor run:\n%s", log)
	if err != nil || len(deleted) != 2 || len(stopped) == 0 {
		t.Fatalf("the run exited with %v (pods deleted: %v, pods on the stopped node: %v)", err, deleted, stopped)
	}

	// Every episode once, none an error.
	st, err := store.OpenRun(out)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Results()
	if err != nil {
		t.Fatal(err)
	}
	// Each attempt run again is told, with its episode and the fault.
	seen := map[string]int{}
	retried := 0
	for _, r := range rs {
		seen[r.Task+"#"+strconv.Itoa(r.Repeat)]++
		if r.Outcome != "success" {
			t.Errorf("%s#%d: %s (%s)", r.Task, r.Repeat, r.Outcome, r.Reason)
		}
		retried += max(r.Attempts, 1) - 1
		label := fmt.Sprintf("retry: %s (repeat %d of 100): infrastructure fault (", r.Task, r.Repeat+1)
		if n := strings.Count(log, label); n != max(r.Attempts, 1)-1 {
			t.Errorf("%s#%d: %d attempts, %d retries told", r.Task, r.Repeat, r.Attempts, n)
		}
	}
	for _, task := range []string{"shell-write", "count-lines"} {
		for i := range 100 {
			if n := seen[task+"#"+strconv.Itoa(i)]; n != 1 {
				t.Errorf("%s#%d recorded %d times", task, i, n)
			}
		}
	}
	if len(rs) != 200 {
		t.Errorf("%d results, want 200", len(rs))
	}

	// Every lost pod, once, with its episode and reason; each was the
	// fault of a retry of that episode.
	lost, err := st.LostEnvironments()
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != len(deleted)+len(stopped) {
		t.Errorf("%d lost environments, want the %d deleted pods and the %d pods of the stopped node", len(lost), len(deleted), len(stopped))
	}
	if retried < len(lost) {
		t.Errorf("%d attempts run again, fewer than the %d lost environments", retried, len(lost))
	}
	why := map[string]string{}
	for _, l := range lost {
		ep, ok := strings.CutPrefix(l.Reason, "while running ")
		ep, _, _ = strings.Cut(ep, ": ")
		if !ok || !strings.Contains(log, "retry: "+ep+": infrastructure fault (") {
			t.Errorf("lost %s: %q names no episode that was run again", l.Name, l.Reason)
		}
		_, after, ok := strings.Cut(l.Reason, ": pod default/")
		pod, _, _ := strings.Cut(after, ":")
		if !ok || why[pod] != "" {
			t.Errorf("lost %s: %q names no pod, or one lost twice", l.Name, l.Reason)
		}
		why[pod] = l.Reason
	}
	for _, p := range deleted {
		if !strings.Contains(why[p], "pod default/"+p+": Deleted") {
			t.Errorf("deleted pod %s: lost as %q, want Deleted", p, why[p])
		}
	}
	for _, p := range stopped {
		if !strings.Contains(why[p], "pod default/"+p+": NodeLost: node node-2 stopped answering: its kubelet last renewed its lease kube-node-lease/node-2 ") {
			t.Errorf("pod %s of the stopped node: lost as %q, want NodeLost naming node-2", p, why[p])
		}
	}
	if n := strings.Count(log, "replaces pod default/"); n != len(lost) {
		t.Errorf("%d pods replaced, want one per lost pod (%d)", n, len(lost))
	}
	for _, l := range strings.Split(log, "\n") {
		_, old, ok := strings.Cut(l, "replaces pod default/")
		if ok && strings.Contains(why[old], "NodeLost") && !strings.Contains(l, " on node node-1 ") {
			t.Errorf("a pod lost with node-2 was replaced on it: %s", l)
		}
	}

	rep, errOut, code := runCLI(t, "", "report", out)
	t.Logf("proctor report:\n%s%s", rep, errOut)
	if code != 0 {
		t.Fatalf("report exited %d", code)
	}
	for _, want := range []string{fmt.Sprintf("Lost environments (run): %d", len(lost)), "episodes                     200", "error                        0 (0.0%)", "success rate                 100.0%", ": NodeLost: node node-2 stopped answering", ": Deleted"} {
		if !strings.Contains(rep, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	for p := range why {
		if !strings.Contains(rep, "pod default/"+p+": ") {
			t.Errorf("the report does not name lost pod %s", p)
		}
	}

	// The viewer's run page lists them too.
	rec := httptest.NewRecorder()
	(&viewer.Server{Root: filepath.Dir(out)}).Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/run/run", nil))
	page := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(page, `<section id="lost">`) || !strings.Contains(page, fmt.Sprintf(`<dd id="run-lost"><a href="#lost">%d</a></dd>`, len(lost))) {
		t.Errorf("the viewer's run page (%d) does not list %d lost environments", rec.Code, len(lost))
	}
	for p := range why {
		if !strings.Contains(page, "pod default/"+p+": ") {
			t.Errorf("the viewer's run page does not name lost pod %s", p)
		}
	}
	if !strings.Contains(page, "NodeLost: node node-2 stopped answering") {
		t.Errorf("the viewer's run page does not give the stopped node's reason")
	}

	// Nothing left; the pods of the stopped node, which no kubelet can
	// confirm gone, were force-deleted: they are not left terminating.
	if p, s := runLeftovers(t, c, id); p != 0 || s != 0 {
		t.Errorf("the run left %d pods and %d secrets", p, s)
	}
	for _, p := range stopped {
		if _, err := c.Client.CoreV1().Pods("default").Get(ctx, p, metav1.GetOptions{}); err == nil {
			t.Errorf("pod %s of the stopped node is still there", p)
		}
	}
}

// stopNode stops one stand-in node of the test bed in DIR as a machine
// goes down: its kubelet and every process of its pods are stopped, then
// killed, at once. Its Node and Lease stay as they were.
func stopNode(t *testing.T, dir, node string) {
	t.Helper()
	kubelet := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if filepath.Base(args[0]) == "standin-kubelet" && hasArgs(args, "--node-name="+node, "--kubeconfig="+filepath.Join(dir, "kubeconfig")) {
			kubelet, _ = strconv.Atoi(filepath.Base(filepath.Dir(f)))
		}
	}
	if kubelet == 0 {
		t.Fatalf("no stand-in kubelet of %s runs", node)
	}
	// Freeze the whole tree (until no new process shows up), then kill.
	frozen := map[int]bool{}
	for {
		tree := descendants(kubelet)
		grew := false
		for _, pid := range tree {
			if !frozen[pid] {
				syscall.Kill(pid, syscall.SIGSTOP)
				frozen[pid] = true
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	for pid := range frozen {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(kubelet, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

func hasArgs(args []string, want ...string) bool {
	n := 0
	for _, a := range args {
		for _, w := range want {
			if a == w {
				n++
			}
		}
	}
	return n == len(want)
}

// descendants returns pid and every process under it.
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		children[ppid] = append(children[ppid], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
