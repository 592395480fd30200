package main

import (
	"errors"
	"fmt"

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
clean" removes them. "proctor kube pool" keeps guest pods Ready across runs
(--env 'kube://NAMESPACE?pool=NAME' runs on them), and "proctor kube job"
prints the manifests that run proctor itself as a Job in the cluster.`,
		Args: cobra.NoArgs,
	}
	c.AddCommand(newKubeCleanCommand(), newKubePoolCommand(), newKubeJobCommand())
	return c
}

func newKubeCleanCommand() *cobra.Command {
	var context, namespace, run string
	var all bool
	c := &cobra.Command{
		Use:   "clean (--run ID | --all)",
		Short: "Remove the pods and secrets that runs made on a Kubernetes cluster",
		Long: `Clean deletes the guest pods and the secrets of one run (--run ID, the id
in the pods' names, proctor-ID-N) or of every run (--all) in a namespace
of the cluster of a kubeconfig context ($KUBECONFIG or ~/.kube/config;
in a pod, the cluster it runs in), and gives back the pods of warm pools
(proctor kube pool) that the run, or any run, claimed. Only objects
labelled app.kubernetes.io/managed-by=proctor are touched; a pool's own
pods and secret stay (proctor kube pool down removes them).`,
		Example: `  proctor kube clean --all
  proctor kube clean --run 3f9a0c1e --context kind-dev --namespace evals`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all == (run != "") {
				return errors.New("say which runs: --run ID or --all")
			}
			c, err := kube.Connect(context, namespace)
			if err != nil {
				return err
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
	return c
}
