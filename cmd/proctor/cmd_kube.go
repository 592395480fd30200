package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/proctor-eval/proctor/env/kube"
)

func newKubeCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "kube",
		Short: "Manage what runs with --env kube:// leave on a Kubernetes cluster",
		Long: `Runs with --env kube://[CONTEXT/]NAMESPACE?pods=N&image=IMAGE make guest
pods and a secret on a cluster, all labelled with the run's id
(proctor.dev/run) and app.kubernetes.io/managed-by=proctor. A run removes
them when it ends; a run that was killed leaves them, and "proctor kube
clean" removes them (with --expired, once their lease lapsed: a run renews
it every ttl/3, ttl=10m by default; the next run in the namespace removes
them too). "proctor kube pool" keeps guest pods Ready across runs
(--env 'kube://NAMESPACE?pool=NAME' runs on them), and "proctor kube job"
prints the manifests that run proctor itself as a Job in the cluster.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newKubeCleanCommand(), newKubePoolCommand(), newKubeJobCommand())
	return c
}

func newKubeCleanCommand() *cobra.Command {
	var context, namespace, run string
	var all, expired bool
	c := &cobra.Command{
		Use:   "clean (--run ID | --all | --expired)",
		Short: "Remove the pods and secrets that runs made on a Kubernetes cluster",
		Long: `Clean deletes the guest pods and the secrets of one run (--run ID, the id
in the pods' names, proctor-ID-N) or of every run (--all) in a namespace
of the cluster of a kubeconfig context ($KUBECONFIG or ~/.kube/config;
in a pod, the cluster it runs in), and gives back the pods of warm pools
(proctor kube pool) that the run, or any run, claimed. Only objects
labelled app.kubernetes.io/managed-by=proctor are touched; a pool's own
pods and secret stay (proctor kube pool down removes them).

With --expired it removes only what runs that were killed left: a run's
secret and each pool pod it claims carry a lease (the annotation
proctor.dev/expires) that the live run renews every ttl/3 (ttl= of
--env kube://, 10m by default); the pods and secrets of the runs whose
lease lapsed are deleted, with the run pods whose secret is gone, and the
claims that lapsed are given back. Each run does this in its namespace
before it starts (on its own pods: the runs'; on a pool: the claims), and
so do proctor kube pool up and status.`,
		Example: `  proctor kube clean --all
  proctor kube clean --run 3f9a0c1e --context kind-dev --namespace evals
  proctor kube clean --expired --namespace evals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n := 0
			for _, b := range []bool{all, run != "", expired} {
				if b {
					n++
				}
			}
			if n != 1 {
				return errors.New("say which runs: --run ID, --all or --expired")
			}
			c, err := kube.Connect(context, namespace)
			if err != nil {
				return err
			}
			if expired {
				return cleanExpired(cmd, c)
			}
			pods, secrets, err := c.Remove(cmd.Context(), run)
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d pods and %d secrets in namespace %s\n", pods, secrets, c.Namespace)
			freed, gerr := c.GiveBackAll(cmd.Context(), run)
			if freed > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "gave back %d pods of warm pools in namespace %s\n", freed, c.Namespace)
			}
			return errors.Join(err, gerr)
		},
	}
	f := c.Flags()
	f.StringVar(&context, "context", "", "kubeconfig context (default: the current one)")
	f.StringVarP(&namespace, "namespace", "n", "", "namespace (default: the context's, else default)")
	f.StringVar(&run, "run", "", "the run whose objects to remove: the ID of its pods' names proctor-ID-N")
	f.BoolVar(&all, "all", false, "remove the objects of every run")
	f.BoolVar(&expired, "expired", false, "remove the objects of the runs whose lease lapsed (killed runs), and give back their claims")
	return c
}

// cleanExpired is proctor kube clean --expired: what the runs whose lease
// lapsed left, and the claims that lapsed.
func cleanExpired(cmd *cobra.Command, c *kube.Cluster) error {
	out := cmd.OutOrStdout()
	now := time.Now()
	runs, err := c.RemoveExpired(cmd.Context(), now)
	pods, secrets := 0, 0
	for _, r := range runs {
		pods += r.Pods
		secrets += r.Secrets
		why := "its pods had no secret left"
		if !r.Lapsed.IsZero() {
			why = "its lease lapsed " + now.Sub(r.Lapsed).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(out, "run %s: deleted %d pods and %d secrets (%s)\n", r.ID, r.Pods, r.Secrets, why)
	}
	fmt.Fprintf(out, "deleted %d pods and %d secrets of %d expired runs in namespace %s\n", pods, secrets, len(runs), c.Namespace)
	freed, gerr := c.GiveBackExpired(cmd.Context(), now)
	fmt.Fprintf(out, "gave back %d pods of warm pools whose claims lapsed in namespace %s\n", freed, c.Namespace)
	return errors.Join(err, gerr)
}
