package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/proctor-eval/proctor/guest"
	"github.com/proctor-eval/proctor/judgment"
	"github.com/proctor-eval/proctor/rollout"
	"github.com/proctor-eval/proctor/run"
	"github.com/proctor-eval/proctor/store"
	"github.com/proctor-eval/proctor/task"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	suite, filter, tag, out, listen string
	tlsCert, tlsKey                 string
	insecureLoopback, verbose       bool
	parallel, perClient, queue      int
	ttl, queueWait                  time.Duration
	envs                            envOptions
	judge                           judgeOptions
	controlsTolerance               int
}

func newServeCommand() *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve SUITE --token-file FILE",
		Short: "Serve a suite's tasks as rollouts (reset, step, reward) over HTTPS, for training",
		Long: `Serve runs a pool of environments made by the same --env providers as
proctor run, and serves the suite's tasks over an HTTPS API as rollouts
that a trainer steps:

  GET    /v1/tasks                   the task instances and their metadata (?gold=true: with their gold solutions)
  POST   /v1/rollouts                {task, seed?, observation, image, inline?, format?, space?}: reset an
                                     environment with the task's setup; the rollout's id, the
                                     instruction and the first observation
  POST   /v1/rollouts/{id}/step      {actions} in the unified action space, or {reply, format} a
                                     model's reply parsed as proctor parse does: the next
                                     observation, the step's reward, done, info
  POST   /v1/rollouts/{id}/finish    end it (if it runs) and run the task's checks: the final reward
  GET    /v1/rollouts/{id}           where it stands
  GET    /v1/rollouts/{id}/image     the last observation's screenshot (png or jpeg)
  DELETE /v1/rollouts/{id}           abandon it and free its environment
  GET    /v1/openapi.json            the OpenAPI document of all of it

The observation is screenshot, tree, both or som (a set-of-mark screenshot
with its marks and the tree); the screenshot is png or jpeg, inline
(base64) or fetched from its image_url. The space is the coordinate space
the policy sees and speaks: screen, smart-resize (UI-TARS's), anthropic
(the computer-use tool's declared display) or a display WIDTHxHEIGHT; the
screenshot, the tree and the marks are given in it, and the steps' points
are read in it (docs/rollouts.md). A step's reward is the rise of
the milestone score where the task has milestones, else 0; a rollout is
done after a terminal action (DONE, FAIL, ANS), when its step budget or
wall time runs out, or when the same turn repeats 5 times, and its final
reward is 1 when the task's checks pass, else 0. A reply that does not
parse, or an action that is not valid, is the policy's mistake: the step
counts and its info says why it did nothing.

Faults are never rewards: an environment that dies, or a check that
cannot decide, ends the rollout with status error, the reason and no
reward; the place is started again for the next rollout. A rollout idle
for --ttl expires and frees its environment. When every environment that
can run a task is taken, a new rollout waits in a queue of --queue
places, else is answered 503 with Retry-After; a client (its
Proctor-Client header, else its address) holds at most --per-client
running rollouts (429 beyond).

Judge checks are decided at the finish as proctor run decides them, by
--judge-model and its flags: the judge must answer a test question when
the service starts and, where the suite has judge controls, get no more
than --judge-controls-tolerance of them wrong; its verdicts are cached in
the run folder. A judge that gives no verdict ends the rollout with
status error and no reward (the evidence is kept: proctor judge decides
the episode later). A suite with judge checks is refused without a judge.

Every rollout is recorded as an episode in the run folder (--out):
proctor report, proctor view and proctor export show rollouts as a run's
episodes, numbered by repeat per task.

Every request needs the bearer token of --token-file (or $PROCTOR_TOKEN;
without either a token is made and printed once); the same token reaches
the --env guest daemons. The API is served over TLS with a certificate
made at each start, whose fingerprint is printed with the address to
give clients, https://HOST:PORT#sha256=FINGERPRINT (or --tls-cert and
--tls-key). --insecure-loopback serves plain HTTP, on a loopback address
only.`,
		Example: `  (umask 077; head -c 24 /dev/urandom | base64 > token)
  proctor serve testdata/mem --env mem=4 --token-file token
  # prints: serving 7 tasks on https://127.0.0.1:7500#sha256=3f1c… (run folder runs/20261127-120000-serve)
  proctor serve suites/web --env browser=4 --token-file token --filter '^forms-'
  proctor serve testdata/runner --parallel 2 --token-file token --insecure-loopback --listen 127.0.0.1:7500
  python3 examples/rollout/gym_loop.py --url http://127.0.0.1:7500 --token-file token --task count-lines`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			suite, err := suiteArg(cmd, args, o.suite)
			if err != nil {
				return err
			}
			o.suite = suite
			return runServe(cmd, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.suite, "suite", "", "the suite (the same as the argument)")
	f.StringVar(&o.filter, "filter", "", "serve only the tasks whose id matches this `REGEX` (@FILE: the ids a file lists)")
	f.StringVar(&o.tag, "tag", "", "serve only the tasks with this tag")
	f.IntVar(&o.parallel, "parallel", 2, "places of each --env provider that makes them here (local, browser, mem)")
	f.StringVar(&o.out, "out", "", "run folder the rollouts are recorded in (default runs/TIME-serve)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:7500", "address to listen on")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) to serve, with --tls-key (default: a self-signed one, made at start)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	f.BoolVar(&o.insecureLoopback, "insecure-loopback", false, "serve plain HTTP, not TLS; only on a loopback --listen address")
	f.DurationVar(&o.ttl, "ttl", rollout.DefaultTTL, "a rollout idle this long expires and frees its environment")
	f.IntVar(&o.perClient, "per-client", 0, "running rollouts one client may hold (default: the pool's size)")
	f.IntVar(&o.queue, "queue", 0, "new rollouts that may wait for a busy pool (default 0: answer 503 at once)")
	f.DurationVar(&o.queueWait, "queue-wait", rollout.DefaultQueueWait, "how long a queued rollout waits before 503")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log every request and every rollout that ends")
	o.envs.flags(f)
	o.judge.flags(f)
	controlsToleranceFlag(f, &o.controlsTolerance)
	f.StringVar(&o.judge.Prices, "prices", "", `JSON price file {"model": {"input": 3, "output": 15}} in dollars per million tokens, of the judges' models (default: built-in list prices)`)
	f.Lookup("token-file").Usage = "file holding the bearer token of the API, and of the --env guest daemons (default $PROCTOR_TOKEN, else a new one, printed)"
	return c
}

func runServe(cmd *cobra.Command, o serveOptions) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	filter, err := filterPattern(o.filter)
	if err != nil {
		return err
	}
	suiteDir, err := suitePath(o.suite)
	if err != nil {
		return err
	}
	s, ps := task.Load(suiteDir)
	if len(ps) > 0 {
		return fmt.Errorf("the suite has problems (see proctor tasks lint %s):\n%w", o.suite, ps)
	}
	tasks, err := selectTasks(s.Tasks, filter, o.tag, describeSuite(o.suite, suiteDir))
	if err != nil {
		return err
	}
	if err := preflight(s, tasks, &o.envs); err != nil {
		return err
	}
	if o.insecureLoopback {
		host, _, err := net.SplitHostPort(o.listen)
		if ip := net.ParseIP(host); err != nil || !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return fmt.Errorf("--insecure-loopback serves plain HTTP on a loopback address only, not %s: drop it to serve TLS", o.listen)
		}
	}
	ln, tlsConfig, target, err := guestListen(guestOptions{listen: o.listen, tlsCert: o.tlsCert, tlsKey: o.tlsKey, insecure: o.insecureLoopback}, stderr)
	if err != nil {
		return err
	}
	defer ln.Close()
	token, err := guestToken(guestOptions{tokenFile: o.envs.tokenFile}, os.Getenv("PROCTOR_TOKEN"), stderr)
	if err != nil {
		return err
	}
	// The guest daemons' token is read as proctor run reads it: the same.
	sources, err := o.envs.sources(ctx, o.parallel, stderr)
	if err != nil {
		return err
	}
	dir := o.out
	if dir == "" {
		dir = filepath.Join("runs", time.Now().Format("20060102-150405")+"-serve")
	}
	if _, err := os.Stat(filepath.Join(dir, store.DBFile)); err == nil {
		return fmt.Errorf("%s already holds a run: choose another --out", dir)
	}
	// The judge, as proctor run has it: it answers a test question and
	// the suite's judge controls before any rollout.
	var jm judgment.Model
	var controls []store.JudgeControl
	if o.judge.set() {
		if jm, err = o.judge.model(runJudgeCache(dir), false); err != nil {
			return err
		}
		if err := judgeAnswers(ctx, jm, tasks); err != nil {
			return err
		}
		if judged(tasks) {
			if controls, err = askControls(ctx, jm, s.Dir, o.controlsTolerance, stderr); err != nil {
				return fmt.Errorf("pre-flight refused the service:\n  %w", err)
			}
		}
	} else if judged(tasks) {
		return fmt.Errorf("tasks have judge checks, and no judge model is configured: give --judge-model (and --judge-provider, --judge-base-url where needed)")
	}
	made := firstMissing(dir)
	st, err := store.Open(dir)
	if err != nil {
		return err
	}
	defer st.Close()
	rc := runConfig{Suite: o.suite, Agent: "rollout", Obs: "per rollout", Filter: filter, Tag: o.tag, Parallel: len(sources), Repeat: 1, Envs: o.envs.specs}
	if o.judge.set() {
		rc.Judge = &o.judge
	}
	cb, _ := json.Marshal(rc)
	if err := st.SetRun(store.Run{ID: filepath.Base(dir), Started: time.Now().UTC(), Harness: version, Suite: o.suite, SuiteHash: run.SuiteHash(tasks),
		Agent: rc.Agent, ObsMode: rc.Obs, Resolution: resolution(tasks), Parallel: rc.Parallel, Repeat: 1, Config: cb}); err != nil {
		return err
	}
	if err := st.SaveReceipt(makeReceipt(ctx, rc, s, tasks, sources, nil)); err != nil {
		return err
	}
	if controls != nil {
		if err := st.SaveJudgeControls(jm.Name(), controls); err != nil {
			return err
		}
	}
	var seen seenEnvs
	seen.watch(sources)
	cfg := rollout.Config{Suite: s, Tasks: tasks, Sources: sources, Store: st, RunID: filepath.Base(dir), TTL: o.ttl,
		PerClient: o.perClient, Queue: o.queue, QueueWait: o.queueWait, Judge: jm}
	var reqLog *log.Logger
	if o.verbose {
		reqLog = log.New(stderr, "serve: ", log.LstdFlags|log.Lmicroseconds)
		cfg.Log = reqLog
	}
	svc, err := rollout.New(ctx, cfg)
	if err != nil {
		st.Close()
		removeRunFolder(dir, made)
		return err
	}
	fmt.Fprintf(stderr, "serving %s on %s (run folder %s)\n", plural(len(tasks), "task"), target, dir)
	// The guest daemon's server: its timeouts and its bounds on
	// connections, with the rollout API's handler.
	gs := &guest.Server{TLS: tlsConfig}
	hs := gs.HTTPServer()
	hs.Handler = rollout.Handler(svc, token, reqLog)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(gs.Listener(ln)) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		fmt.Fprintln(stderr, "stopping")
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs.Shutdown(sctx)
		cancel()
	}
	svc.Close()
	finishReceipt(st, &seen, err == nil, stderr)
	fmt.Fprintf(stderr, "run folder: %s\n", dir)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
