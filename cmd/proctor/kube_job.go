package main

import (
	"github.com/spf13/cobra"

	"github.com/proctor-eval/proctor/env/kube"
)

func newKubeJobCommand() *cobra.Command {
	j := kube.Job{}
	c := &cobra.Command{
		Use:   "job [--name NAME] [--namespace NS] [--image IMAGE] -- PROCTOR-ARGS...",
		Short: "Print the manifests that run proctor itself as a Job in a Kubernetes cluster",
		Long: `Job writes to stdout, as YAML, the manifests that run "proctor PROCTOR-ARGS..."
as a Job in the cluster: a ServiceAccount, a Role and a RoleBinding in each
namespace that an --env kube:// value of the arguments names, and the Job,
all named --name. The Role grants what the provider does there and no more:
on pods create, delete, get and list, and on secrets create, delete, list and
patch (a run's own pods, and its secret's lease); with pool=NAME, on pods create, delete, get, list and
update, and on secrets get; and get and create on pods/portforward (over a
WebSocket, or SPDY) only where the value says connect=forward (in the
cluster the run reaches its pods by their addresses). Apply them with kubectl apply -f -. The Job does not
restart a run that fails, and the run's folder is the container's: mount a
volume and give --out to keep it.`,
		Example: `  proctor kube job --namespace evals --image registry.example/proctor-guest:1 -- run suites/desktop --agent replay --env 'kube://evals?pods=4'
  proctor kube job -- run --agent replay --env 'kube://evals?pool=default&pods=4' | kubectl apply -f -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			j.Args = args
			objs, err := j.Manifests()
			if err != nil {
				return err
			}
			b, err := kube.YAML(objs)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&j.Name, "name", "proctor-run", "name of the Job, its ServiceAccount, Roles and RoleBindings")
	f.StringVarP(&j.Namespace, "namespace", "n", "", "the Job's namespace (default: that of the first --env kube:// value, else default)")
	f.StringVar(&j.Image, "image", kube.DefaultImage, "an image that holds proctor (the guest image does)")
	return c
}
