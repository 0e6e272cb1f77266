package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/kube"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

func newRenderCmd() *cobra.Command {
	var engine, namespace, image string
	var shards int
	cmd := &cobra.Command{
		Use:   "render --engine kubernetes <scenario.yaml | name>",
		Short: "Print the manifests 'bulkhead run --engine kubernetes' would create, for review",
		Long: `Print, as one YAML stream, the objects a run of the scenario creates on the engine: for each
configuration run, its root ConfigMap (which owns the rest), the fake dependencies' and
Toxiproxy's Deployments and Services, the system under test's Deployment and Service (unless
its target is a url:), and the load: its attack spec in a ConfigMap and an Indexed Job of
--shards 'bulkhead attack --segment k/N' pods. A run creates the same objects, with owner
references, its own names and the common start (t0) in the spec. Nothing is sent to a cluster.`,
		Example: `  bulkhead render --engine kubernetes hypothesis --namespace chaos --shards 2 | kubectl apply --dry-run=server -f -`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if engine != kube.Name {
				return usageError(fmt.Errorf("--engine %q: only %s renders manifests (the local engine has none)", engine, kube.Name))
			}
			sc, err := scenarios.Open(args[0])
			if err != nil {
				return usageError(err)
			}
			objs, err := kube.Manifests(sc, namespace, image, shards)
			if err != nil {
				return err
			}
			return kube.WriteYAML(cmd.OutOrStdout(), objs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&engine, "engine", kube.Name, "the engine whose manifests to print (kubernetes)")
	f.StringVar(&namespace, "namespace", "default", "namespace of the objects")
	f.StringVar(&image, "image", kube.DefaultImage, "the bulkhead image the pods run")
	f.IntVar(&shards, "shards", 1, "how many 'bulkhead attack' shards the load Job runs")
	return cmd
}
