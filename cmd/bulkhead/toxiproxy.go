package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
)

// defaultToxiproxyAPI is toxiproxy-server's default API address.
const defaultToxiproxyAPI = "http://127.0.0.1:8474"

func newToxiproxyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "toxiproxy",
		Short: "Tend an external toxiproxy-server",
	}
	var api string
	clean := &cobra.Command{
		Use:   "clean",
		Short: "Remove the proxies that killed bulkhead runs left on an external toxiproxy-server",
		Long: `Remove from an external toxiproxy-server every proxy a bulkhead run created (named
bulkhead-<pid>-...) whose process is no longer alive on this host, its toxics first, and list
what was removed. Proxies of live runs and proxies with other names are left alone. A run with
--toxiproxy does the same when it starts.`,
		Example: `  bulkhead toxiproxy clean
  bulkhead toxiproxy clean --toxiproxy http://127.0.0.1:8474`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			x, err := proxy.NewExternal(cmd.Context(), api)
			if err != nil {
				return err
			}
			defer x.Close(cmd.Context())
			removed, err := x.CleanStale(cmd.Context(), nil)
			out := cmd.OutOrStdout()
			for _, r := range removed {
				fmt.Fprintf(out, "removed %s (pid %d is not running)\n", r.Name, r.PID)
			}
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				fmt.Fprintf(out, "no stale bulkhead proxies on %s\n", x.URL())
			} else {
				fmt.Fprintf(out, "removed %d stale proxies from %s\n", len(removed), x.URL())
			}
			return nil
		},
	}
	clean.Flags().StringVar(&api, "toxiproxy", defaultToxiproxyAPI, "API URL of the toxiproxy-server")
	cmd.AddCommand(clean)
	return cmd
}
