package main

import (
	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of a scenario file",
		Long: `Print the JSON Schema (draft 2020-12) of a scenario file, generated from the types the loader
decodes through and from the registries (fault types, pool kinds, target kinds, tests, claim
metrics). An editor with a YAML language server completes and checks a scenario against it when the
file's first line names it:

  # yaml-language-server: $schema=scenario.schema.json

The schema accepts what the loader can decode; what needs the whole file (a fault on a dependency
that exists, a pool covering each dependency once) only 'bulkhead validate' says.
docs/scenario.schema.json is this output, committed.`,
		Example: `  bulkhead schema > scenario.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(scenarios.JSONSchema())
			return err
		},
	}
}
