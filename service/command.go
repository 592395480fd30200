package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/proctor-eval/proctor/task"
)

// ErrNoData is wrapped by the error of a command service whose pristine
// data folder is missing: the suite's set-up has not run.
const ErrNoData Error = "the service's data folder is missing"

// Instances are the command services of one place of the pool: each
// server runs from its own copy of its pristine data folder, on its own
// loopback port. Reset restores them before an episode. The methods are
// not safe for concurrent use; a place runs one episode at a time.
//
// A service restored on every episode keeps a spare: once an episode's
// instance runs, the next one is copied and started in the background,
// on another port, so that the next reset only swaps them (as a browser
// opens the next episode's context ahead). A reset that comes before the
// spare is ready waits for it.
type Instances struct {
	suite *task.Suite
	svcs  []task.Service
	run   map[string]*instance
	spare map[string]*pending
	bg    sync.WaitGroup // stops of replaced instances
	// Resets counts the resets, ResetTime sums their time.
	Resets    int
	ResetTime time.Duration
}

// instance is one running server.
type instance struct {
	sv     task.Service
	port   int
	dir    string // holds data/ (the copy) and log
	cmd    *exec.Cmd
	exited chan struct{}
}

// pending is an instance starting in the background.
type pending struct {
	inst   *instance
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

// NewInstances returns the suite's command services for one place, none
// running yet; nil when the suite has none.
func NewInstances(s *task.Suite) *Instances {
	if s == nil {
		return nil
	}
	var svcs []task.Service
	for _, sv := range s.Services {
		if sv.IsCommand() {
			svcs = append(svcs, sv)
		}
	}
	if len(svcs) == 0 {
		return nil
	}
	reapOrphans()
	return &Instances{suite: s, svcs: svcs, run: map[string]*instance{}, spare: map[string]*pending{}}
}

// Reset gives the command services an episode needs a fresh start: a
// server whose data is restored on every episode is replaced by one
// started from a new copy of the pristine folder (its spare, or one
// started now); one kept for the run is started the first time only. The
// others are stopped, so that a place runs only what its episode uses.
// The servers restart side by side, and Reset returns once all answer.
// names are the services to run (task.UsedServices); nil means all.
func (in *Instances) Reset(ctx context.Context, names []string) error {
	if in == nil {
		return nil
	}
	start := time.Now()
	// The maps change only here, in this goroutine: each service's
	// restart reports into its own slot, read once all are done.
	type result struct {
		sv   task.Service
		inst *instance
		err  error
	}
	var (
		wg      sync.WaitGroup
		results []*result
	)
	for _, sv := range in.svcs {
		old, spare := in.run[sv.Name], in.spare[sv.Name]
		if names != nil && !slices.Contains(names, sv.Name) {
			if old != nil {
				in.retire(old)
				delete(in.run, sv.Name)
			}
			if spare != nil {
				spare.drop()
				delete(in.spare, sv.Name)
			}
			continue
		}
		if old != nil && sv.Reset == task.ResetRun && old.alive() {
			continue
		}
		delete(in.spare, sv.Name)
		r := &result{sv: sv}
		results = append(results, r)
		wg.Go(func() {
			r.inst, r.err = in.next(ctx, sv, old, spare)
		})
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.err != nil {
			delete(in.run, r.sv.Name)
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrStart, r.sv.Name, r.err))
			continue
		}
		in.run[r.sv.Name] = r.inst
		if r.sv.Reset != task.ResetRun {
			in.spare[r.sv.Name] = in.startSpare(r.sv)
		}
	}
	in.Resets++
	in.ResetTime += time.Since(start)
	return errors.Join(errs...)
}

// next is the service's instance for the next episode: its spare once it
// answers, else one started now on the old one's port.
func (in *Instances) next(ctx context.Context, sv task.Service, old *instance, spare *pending) (*instance, error) {
	if spare != nil {
		select {
		case <-spare.done:
		case <-ctx.Done():
			spare.drop()
			if old != nil {
				in.retire(old) // it leaves the place with this reset
			}
			return nil, ctx.Err()
		}
		if spare.err == nil {
			if old != nil {
				in.retire(old)
			}
			return spare.inst, nil
		}
		// The spare did not start: start one now, and say why if that
		// fails too.
	}
	port := 0
	if old != nil {
		port = old.port // the same origin episode after episode
		old.stop()
	}
	inst, err := in.start(ctx, sv, port)
	if err != nil && spare != nil && spare.err != nil {
		err = fmt.Errorf("%w (its spare: %v)", err, spare.err)
	}
	return inst, err
}

// startSpare starts the service's next instance in the background.
func (in *Instances) startSpare(sv task.Service) *pending {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pending{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		p.inst, p.err = in.start(ctx, sv, 0)
	}()
	return p
}

// drop ends a spare, started or not.
func (p *pending) drop() {
	p.cancel()
	<-p.done
	if p.inst != nil {
		p.inst.stop()
	}
}

// retire stops a replaced instance in the background.
func (in *Instances) retire(i *instance) {
	in.bg.Go(i.stop)
}

// Origins maps each running service's name to its origin.
func (in *Instances) Origins() map[string]string {
	out := map[string]string{}
	if in == nil {
		return out
	}
	for n, i := range in.run {
		out[n] = "http://127.0.0.1:" + strconv.Itoa(i.port)
	}
	return out
}

// Data is the folder of the running service's copy of its data, and
// false when the service is not running.
func (in *Instances) Data(name string) (string, bool) {
	if in == nil {
		return "", false
	}
	i, ok := in.run[name]
	if !ok {
		return "", false
	}
	return filepath.Join(i.dir, "data"), true
}

// Close stops the servers and their spares, and removes their copies.
func (in *Instances) Close() error {
	if in == nil {
		return nil
	}
	for n, p := range in.spare {
		p.drop()
		delete(in.spare, n)
	}
	for n, i := range in.run {
		i.stop()
		delete(in.run, n)
	}
	in.bg.Wait()
	return nil
}

// start copies the service's pristine data and starts its server on
// port (a free one when 0), and waits until it answers.
func (in *Instances) start(ctx context.Context, sv task.Service, port int) (*instance, error) {
	dir, err := os.MkdirTemp("", "proctor-service-"+sv.Name+"-")
	if err != nil {
		return nil, err
	}
	// A server that drops to another user (Redmine runs as www-data)
	// must reach its copy.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	i := &instance{sv: sv, dir: dir}
	ok := false
	defer func() {
		if !ok {
			i.stop()
		}
	}()
	data := filepath.Join(dir, "data")
	if pristine := in.suite.DataPath(sv); pristine != "" {
		if st, err := os.Stat(pristine); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: %s (run `proctor setup %s` first)", ErrNoData, pristine, in.suite.Name)
		}
		// cp -a keeps owners, modes and links: a server that runs as
		// another user finds its files as the set-up left them.
		out, err := exec.CommandContext(ctx, "cp", "-a", pristine+"/.", data+"/").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("copy %s: %v: %s", pristine, err, bytes.TrimSpace(out))
		}
	} else if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	i.port = port
	suiteDir, err := filepath.Abs(in.suite.Dir)
	if err != nil {
		return nil, err
	}
	args := make([]string, len(sv.Command))
	for k, a := range sv.Command {
		a = strings.ReplaceAll(a, "{{port}}", strconv.Itoa(port))
		a = strings.ReplaceAll(a, "{{data}}", data)
		args[k] = strings.ReplaceAll(a, "{{suite}}", suiteDir)
	}
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	i.cmd = exec.Command(args[0], args[1:]...)
	i.cmd.Dir = suiteDir
	i.cmd.Stdout, i.cmd.Stderr = log, log
	i.cmd.Env = append(os.Environ(), "PROCTOR_SUITE_DATA="+in.suite.DataDir(), i.marker(), ownerMarker())
	// Its own process group, so that stop reaches what it starts; killed
	// with Proctor.
	i.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := i.cmd.Start(); err != nil {
		return nil, err
	}
	i.exited = make(chan struct{})
	go func() {
		i.cmd.Wait()
		close(i.exited)
	}()
	if err := i.waitReady(ctx); err != nil {
		return nil, err
	}
	ok = true
	return i, nil
}

// waitReady polls the service's ready path until it answers with a status
// under 500, the server exits, or the start timeout ends.
func (i *instance) waitReady(ctx context.Context) error {
	timeout := time.Duration(i.sv.StartTimeout)
	if timeout <= 0 {
		timeout = time.Duration(task.DefaultStartTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path := i.sv.Ready
	if path == "" {
		path = "/"
	}
	url := "http://127.0.0.1:" + strconv.Itoa(i.port) + path
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no answer"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode < 500 {
				return nil
			}
			last = res.Status
		}
		select {
		case <-i.exited:
			return fmt.Errorf("%s exited (%v) before %s answered; its log ends:\n%s", i.sv.Command[0], i.cmd.ProcessState, url, i.logTail())
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %s (last: %s); its log ends:\n%s", url, timeout, last, i.logTail())
		case <-tick.C:
		}
	}
}

// alive reports whether the server still runs.
func (i *instance) alive() bool {
	select {
	case <-i.exited:
		return false
	default:
		return i.exited != nil
	}
}

// logTail is the end of the server's log.
func (i *instance) logTail() string {
	b, _ := os.ReadFile(filepath.Join(i.dir, "log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// stop kills the server's process group and removes its copy: the data
// is thrown away, so nothing is gained by a graceful stop. A server may
// start daemons in sessions of their own (Passenger's watchdog and core),
// out of the group's reach: every process whose environment carries the
// instance's marker, which children inherit, is killed too.
func (i *instance) stop() {
	if i.cmd != nil && i.cmd.Process != nil {
		syscall.Kill(-i.cmd.Process.Pid, syscall.SIGKILL)
		<-i.exited
		i.cmd = nil
		killMarked(i.marker())
	}
	os.RemoveAll(i.dir)
}

// marker is the environment variable that marks the instance's processes.
func (i *instance) marker() string { return "PROCTOR_SERVICE_INSTANCE=" + i.dir }

// killMarked kills the processes whose environment holds the marker,
// until none is left (a dying daemon may fork once more).
func killMarked(marker string) {
	want := []byte("\x00" + marker + "\x00")
	for range 5 {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		n := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), want) {
				continue
			}
			syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
