package main

import (
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/proctor-eval/proctor/env/kube"
)

func newKubePoolCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "pool",
		Short: "Keep a warm pool of guest pods on a Kubernetes cluster across runs",
		Long: `A warm pool is a set of guest pods kept Ready across runs, so that a run
starts on pods that are already up: "proctor kube pool up NAME" makes it (a
secret, proctor-pool-NAME, with the pool's own token and TLS key pair, and
the pods proctor-pool-NAME-I, labelled proctor.dev/pool=NAME), and a run
with --env 'kube://NAMESPACE?pool=NAME&pods=N' claims N of its Ready pods
(label proctor.dev/claim=RUN), resets them between episodes as any guest,
and gives them back when it ends. A pod lost under a run is deleted and
another made in the pool in its place. "proctor kube clean --run ID" gives
back the pods of a run that was killed; its claims' lease lapses after the
run's ttl (10m by default) without renewal, and then "proctor kube clean
--expired", the next run on a pool, and pool up and status give them back.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newKubePoolUpCommand(), newKubePoolStatusCommand(), newKubePoolDownCommand())
	return c
}

// kubeWhere are the flags that say which cluster and namespace.
type kubeWhere struct{ context, namespace string }

func (w *kubeWhere) flags(c *cobra.Command) {
	c.Flags().StringVar(&w.context, "context", "", "kubeconfig context (default: the current one)")
	c.Flags().StringVarP(&w.namespace, "namespace", "n", "", "namespace (default: the context's, else default)")
}

func newKubePoolUpCommand() *cobra.Command {
	var where kubeWhere
	var pods, max int
	var wait time.Duration
	var image, pull, cpu, memory, cpuLimit, memoryLimit, runtimeClass, size string
	var nodes, tolerations []string
	c := &cobra.Command{
		Use:   "up NAME",
		Short: "Make a warm pool of guest pods, or bring it to --pods Ready pods",
		Long: `Up makes the pool NAME if it is not there (its secret and --pods pods made
as the flags say, which are the parameters of --env kube:// of the same
names), or brings the pool that is there to --pods pods: it deletes its pods
that failed and no run holds, makes the missing ones, or deletes free ones
(the last first) down to --pods. It waits, at most --wait, until --pods pods
are Ready, and fails, in Kubernetes' words, when one cannot become Ready. A
pool keeps the pods' parameters it was made with: to change them, take it
down first. With --max M, a run that finds fewer pods free than it can use
(pods= of --env kube://, and no more than its episodes) grows the pool up to
M pods with pods made for it, which it deletes when it is done with each, so
that the pool shrinks back to --pods as the run's queue drains.`,
		Example: `  proctor kube pool up default --pods 4
  proctor kube pool up burst --pods 2 --max 8
  proctor kube pool up evals --namespace evals --pods 8 --image registry.example/proctor-guest:1 --memory 2Gi`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := url.Values{}
			for name, v := range map[string]string{"image": image, "pull": pull, "cpu": cpu, "memory": memory,
				"cpu-limit": cpuLimit, "memory-limit": memoryLimit, "runtime-class": runtimeClass, "size": size} {
				if cmd.Flags().Changed(name) {
					q.Set(name, v)
				}
			}
			for _, v := range nodes {
				q.Add("node", v)
			}
			for _, v := range tolerations {
				q.Add("toleration", v)
			}
			query := kube.PoolSpecQuery(q)
			all := url.Values{}
			for k, v := range q {
				all[k] = v
			}
			all.Set("pods", strconv.Itoa(pods))
			all.Set("wait", wait.String())
			s, err := kube.ParseSpec("?" + all.Encode())
			if err != nil {
				return err
			}
			c, err := kube.Connect(where.context, where.namespace)
			if err != nil {
				return err
			}
			start := time.Now()
			c.SweepExpired(cmd.Context(), kube.Sweep{Runs: true, Claims: true}, cmd.ErrOrStderr())
			made, deleted, err := c.PoolUp(cmd.Context(), args[0], s, query, max)
			if err != nil {
				return fmt.Errorf("pool %s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pool %s in namespace %s: %d pods Ready (%d made, %d deleted) in %s\n",
				args[0], c.Namespace, s.Pods, made, deleted, time.Since(start).Round(100*time.Millisecond))
			return nil
		},
	}
	where.flags(c)
	f := c.Flags()
	f.IntVar(&pods, "pods", 1, "how many guest pods the pool keeps, 1 to 256")
	f.IntVar(&max, "max", 0, "how many pods runs may grow the pool to while they need more than are free (default: --pods, no growth)")
	f.DurationVar(&wait, "wait", kube.DefaultWait, "how long to wait for the pods to be Ready")
	f.StringVar(&image, "image", kube.DefaultImage, "the guest image")
	f.StringVar(&pull, "pull", "", "the image's pull policy: Always, IfNotPresent or Never (default: the cluster's)")
	f.StringVar(&cpu, "cpu", "500m", "each pod's CPU request")
	f.StringVar(&memory, "memory", "1Gi", "each pod's memory request")
	f.StringVar(&cpuLimit, "cpu-limit", "", "each pod's CPU limit (default: none)")
	f.StringVar(&memoryLimit, "memory-limit", "", "each pod's memory limit (default: --memory)")
	f.StringArrayVar(&nodes, "node", nil, "a node label `KEY=VALUE` the pods must run on (repeatable)")
	f.StringArrayVar(&tolerations, "toleration", nil, "a toleration `KEY[=VALUE][:EFFECT]` (repeatable)")
	f.StringVar(&runtimeClass, "runtime-class", "", "the pods' RuntimeClass (gvisor, kata)")
	f.StringVar(&size, "size", "1920x1080", "the desktops' screen size")
	return c
}

func newKubePoolStatusCommand() *cobra.Command {
	var where kubeWhere
	c := &cobra.Command{
		Use:   "status NAME",
		Short: "List the pods of a warm pool: Ready or not, claimed by which run, age",
		Long: `Status lists the pods of the pool NAME, each with its state (Ready, or what
Kubernetes says it waits for or why it failed), the run that claimed it
(- when free) and since when, its age and its node; its first line says how
many pods the pool keeps (size) and may grow to (at most). It first gives back
the claims that lapsed (their runs were killed), and says so on stderr.`,
		Example: `  proctor kube pool status default`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := kube.Connect(where.context, where.namespace)
			if err != nil {
				return err
			}
			c.SweepExpired(cmd.Context(), kube.Sweep{Runs: true, Claims: true}, cmd.ErrOrStderr())
			pods, query, err := c.PoolStatus(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			size, max, err := c.PoolBounds(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			writePoolStatus(cmd, args[0], c.Namespace, query, size, max, pods, time.Now())
			return nil
		},
	}
	where.flags(c)
	return c
}

// writePoolStatus writes what proctor kube pool status shows.
func writePoolStatus(cmd *cobra.Command, pool, ns, query string, size, max int, pods []kube.PoolPod, now time.Time) {
	ready, claimed := 0, 0
	for _, p := range pods {
		if p.State == "Ready" {
			ready++
		}
		if p.Claim != "" {
			claimed++
		}
	}
	made, err := url.QueryUnescape(query)
	if err != nil || made == "" {
		made = query
	}
	if made == "" {
		made = "the defaults"
	}
	out := cmd.OutOrStdout()
	bounds := ""
	if size > 0 {
		bounds = fmt.Sprintf(", size %d, at most %d", size, max)
	}
	fmt.Fprintf(out, "pool %s in namespace %s: %d pods, %d Ready, %d free, %d claimed%s (pods made from %s)\n",
		pool, ns, len(pods), ready, countFree(pods), claimed, bounds, made)
	if len(pods) == 0 {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "pod\tstate\tclaimed by\tclaimed for\tage\tnode")
	for _, p := range pods {
		by, since := "-", "-"
		if p.Claim != "" {
			by = p.Claim
			if !p.Claimed.IsZero() {
				since = duration.HumanDuration(now.Sub(p.Claimed))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.State, by, since, duration.HumanDuration(now.Sub(p.Created)), orDash(p.Node))
	}
	tw.Flush()
}

// countFree counts the pods a run can claim: Ready and not claimed.
func countFree(pods []kube.PoolPod) int {
	n := 0
	for _, p := range pods {
		if p.State == "Ready" && p.Claim == "" {
			n++
		}
	}
	return n
}

func newKubePoolDownCommand() *cobra.Command {
	var where kubeWhere
	c := &cobra.Command{
		Use:   "down NAME",
		Short: "Delete a warm pool: its pods (claimed ones too) and its secret",
		Long: `Down deletes every pod of the pool NAME, those that runs hold too (their
runs lose them, as any lost pod), and the pool's secret.`,
		Example: `  proctor kube pool down default`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := kube.Connect(where.context, where.namespace)
			if err != nil {
				return err
			}
			pods, secrets, err := c.PoolDown(cmd.Context(), args[0])
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d pods and %d secrets of pool %s in namespace %s\n", pods, secrets, args[0], c.Namespace)
			return err
		},
	}
	where.flags(c)
	return c
}
