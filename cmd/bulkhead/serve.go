package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/dependency"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
	"github.com/bulkheadlab/bulkhead/target"
)

type serveOptions struct {
	Addr          string
	Scenario      string
	Configuration string
	Deps          map[string]string
	Endpoints     map[string]string
	Mode          string
	PoolSize      int
	Timeout       time.Duration
}

func newServeCmd() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the service under test on its own, for any load tool and an external Toxiproxy",
		Long: `Run the sample service standalone. Either take the service from a scenario (--scenario and
--configuration; dependencies not given with --dep are started in-process as fake dependencies
with the scenario's latency), or describe it with flags (--dep, --endpoint, --mode, --pool-size).

Every response carries X-Bulkhead-Outcome (ok, rejected, timeout, upstream) and, on failure,
X-Bulkhead-Pool / X-Bulkhead-Reason / X-Bulkhead-Dependency. GET /debug/resources shows the
resource account as JSON; GET /metrics serves Prometheus metrics. Stop with Ctrl-C.`,
		Example: `  bulkhead dep --name A --addr 127.0.0.1:9001 &
  bulkhead dep --name B --addr 127.0.0.1:9002 &
  bulkhead serve --dep A=http://127.0.0.1:9001 --dep B=http://127.0.0.1:9002 --mode split --pool-size 10
  echo "GET http://127.0.0.1:8080/a" | vegeta attack -rate 50/s -duration 10s | vegeta report

  bulkhead serve --scenario hypothesis --configuration shared --dep A=http://127.0.0.1:26379`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:8080", "address to listen on (binds loopback unless told otherwise)")
	f.StringVar(&o.Scenario, "scenario", "", "take dependencies, endpoints, timeout and pools from this scenario")
	f.StringVar(&o.Configuration, "configuration", "", "with --scenario: the configuration to serve (default: the first)")
	f.StringToStringVar(&o.Deps, "dep", nil, "dependency NAME=URL (repeatable)")
	f.StringToStringVar(&o.Endpoints, "endpoint", nil, "endpoint PATH=DEP (repeatable; default /<name in lower case> for each dependency)")
	f.StringVar(&o.Mode, "mode", "split", "without --scenario: shared, split or none")
	f.IntVar(&o.PoolSize, "pool-size", 10, "without --scenario: P, the slots of either layout: the shared pool's size, split among the dependencies (P/2 each for two)")
	f.DurationVar(&o.Timeout, "timeout", 500*time.Millisecond, "without --scenario: client timeout of every dependency call")
	return cmd
}

func runServe(cmd *cobra.Command, o *serveOptions) error {
	out := cmd.OutOrStdout()
	var t *target.Service
	if o.Scenario != "" {
		sc, conf, err := serveScenario(o)
		if err != nil {
			return err
		}
		// The same wiring as a run's: fake dependencies for those not given, then the target.
		fakes, err := target.StartFakes(sc.FakeDependencies(func(int) int64 { return sc.Seed }), o.Deps)
		if err != nil {
			return err
		}
		defer fakes.Close()
		urls := map[string]string{}
		for _, d := range sc.Dependencies {
			if u, ok := o.Deps[d.Name]; ok {
				urls[d.Name] = u
			} else {
				urls[d.Name] = fakes.URLs[d.Name]
				fmt.Fprintf(out, "fake dependency %s at %s\n", d.Name, urls[d.Name])
			}
		}
		cfg, err := sc.ServiceConfig(conf, urls)
		if err != nil {
			return err
		}
		if t, err = target.StartService(cfg, o.Addr); err != nil {
			return fmt.Errorf("--addr %s: %w", o.Addr, err)
		}
	} else {
		cfg, err := flagConfig(o)
		if err != nil {
			return err
		}
		if t, err = target.StartService(cfg, o.Addr); err != nil {
			return fmt.Errorf("--addr %s: %w", o.Addr, err)
		}
	}
	cfg := t.Config()
	fmt.Fprintf(out, "service (%s) listening on %s — endpoints:", cfg.Mode, t.URL())
	for _, e := range cfg.Endpoints {
		fmt.Fprintf(out, " %s->%s", e.Path, strings.Join(e.Calls, "+"))
	}
	fmt.Fprintln(out, "; /debug/resources, /metrics")
	<-cmd.Context().Done()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return t.Close(ctx)
}

// serveScenario opens --scenario and picks --configuration (default: the first).
func serveScenario(o *serveOptions) (*scenarios.Scenario, scenarios.Configuration, error) {
	sc, err := scenarios.Open(o.Scenario)
	if err != nil {
		return nil, scenarios.Configuration{}, err
	}
	if o.Configuration == "" {
		return sc, sc.Configurations[0], nil
	}
	for _, c := range sc.Configurations {
		if c.Name == o.Configuration {
			return sc, c, nil
		}
	}
	return nil, scenarios.Configuration{}, fmt.Errorf("--configuration: no configuration %q in %s", o.Configuration, sc.Path)
}

// flagConfig builds the service config of `serve` without a scenario from --dep, --endpoint,
// --mode, --pool-size and --timeout.
func flagConfig(o *serveOptions) (service.Config, error) {
	var cfg service.Config
	if len(o.Deps) == 0 {
		return cfg, fmt.Errorf("--dep: give at least one dependency NAME=URL, or --scenario")
	}
	var names []string
	for n := range o.Deps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cfg.Dependencies = append(cfg.Dependencies, service.DependencyConfig{Name: n, URL: o.Deps[n]})
	}
	eps := o.Endpoints
	if len(eps) == 0 {
		eps = map[string]string{}
		for _, n := range names {
			eps["/"+strings.ToLower(n)] = n
		}
	}
	var paths []string
	for p := range eps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		cfg.Endpoints = append(cfg.Endpoints, service.EndpointConfig{Path: p, Calls: []string{eps[p]}})
	}
	cfg.Mode = service.Mode(o.Mode)
	cfg.ClientTimeout = o.Timeout
	pools, err := scenarios.DefaultPools(cfg.Mode, o.PoolSize, names, o.Timeout)
	if err != nil {
		return cfg, fmt.Errorf("--pool-size: %w", err)
	}
	cfg.Pools = pools
	return cfg, nil
}

func newDepCmd() *cobra.Command {
	var (
		cfg  dependency.Config
		addr string
	)
	cmd := &cobra.Command{
		Use:   "dep",
		Short: "Run a fake dependency: answers GET after a latency, with seeded jitter",
		Long: `Run one fake dependency server. It answers every GET with 200 after --latency plus a uniform
jitter in [0, --jitter) drawn from a source seeded with --seed.`,
		Example: `  bulkhead dep --name A --latency 5ms --jitter 1ms --addr 127.0.0.1:9001`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			srv := dependency.New(cfg)
			u, err := srv.Start(addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dependency %s at %s (latency %s, jitter %s)\n", cfg.Name, u, cfg.Latency, cfg.Jitter)
			<-cmd.Context().Done()
			srv.Close()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Name, "name", "A", "dependency name")
	f.DurationVar(&cfg.Latency, "latency", 5*time.Millisecond, "base latency")
	f.DurationVar(&cfg.Jitter, "jitter", 0, "uniform jitter added to the latency")
	f.Int64Var(&cfg.Seed, "seed", 1, "seed of the jitter source")
	f.StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	return cmd
}
