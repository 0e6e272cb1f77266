package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate <scenario.yaml | name>...",
		Short: "Check scenario files without running them",
		Long: `Load and validate each scenario file (or built-in name). Every problem is reported with the
file, line and field; the exit status is non-zero if any file has one.`,
		Example: `  bulkhead validate scenarios/*.yaml
  bulkhead validate hypothesis`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, a := range args {
				sc, err := scenarios.Open(a)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ok  %s: %s, %d configurations, %d phases, %s\n",
					a, sc.Name, len(sc.Configurations), len(sc.Phases), sc.Duration())
			}
			if len(errs) > 0 {
				return usageError(fmt.Errorf("%d of %d scenario(s) invalid:\n%w", len(errs), len(args), errors.Join(errs...)))
			}
			return nil
		},
	}
}

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range scenarios.Names() {
				sc, err := scenarios.Open(n)
				if err != nil {
					return err
				}
				desc := strings.SplitN(strings.TrimSpace(sc.Description), "\n", 2)[0]
				fmt.Fprintf(cmd.OutOrStdout(), "%-14s %6s  %s\n", n, sc.Duration(), desc)
			}
			return nil
		},
	}
}
