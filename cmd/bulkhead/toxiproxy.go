package main

import (
	"fmt"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/faults/proxy/apiserver"
)

// defaultToxiproxyAPI is toxiproxy-server's default API address.
const defaultToxiproxyAPI = "http://127.0.0.1:8474"

func newToxiproxyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "toxiproxy",
		Short: "Run or tend an external Toxiproxy server",
	}
	var api string
	clean := &cobra.Command{
		Use:   "clean",
		Short: "Remove the proxies that killed bulkhead runs left on an external toxiproxy-server",
		Long: `Remove from an external toxiproxy-server every proxy a bulkhead run created (named
bulkhead-<pid>.<host>-...) whose process is no longer alive on this host, its toxics first, and list
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
	cmd.AddCommand(clean, newToxiproxyServeCmd())
	return cmd
}

func newToxiproxyServeCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Toxiproxy server (the embedded one, as its own process) for --toxiproxy",
		Long: `Serve Toxiproxy's HTTP API on --listen, as toxiproxy-server does, from the Toxiproxy module this
binary is built with, so the host that holds the dependencies needs nothing else installed. A
run elsewhere drives it with --toxiproxy http://ADDR: it creates the proxies (on the addresses
the scenario's listen: fields give), switches the faults and removes the proxies at its end.
The API has no authentication: listen on an address only the runner's host can reach. Stop
with Ctrl-C or SIGTERM; every proxy still there is removed then.`,
		Example: `  bulkhead toxiproxy serve --listen 10.213.0.2:8474
  bulkhead run scenario.yaml --toxiproxy http://10.213.0.2:8474   # on the load host`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := apiserver.Listen(listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			// What /version answers, so a run's manifest records the module's release.
			toxiproxy.Version = strings.TrimPrefix(proxy.ModuleVersion(), "v")
			fmt.Fprintf(cmd.OutOrStdout(), "toxiproxy %s API listening on http://%s\n", toxiproxy.Version, s.Addr())
			return s.Serve(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8474", "address of the API (host:port; port 0 picks one)")
	return cmd
}
