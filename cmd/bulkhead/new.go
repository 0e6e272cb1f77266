package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// newOptions are the flags of `bulkhead new`.
type newOptions struct {
	from, name, command, dir, ready, metrics, version, rate string
	urls, endpoints, upstreams, env, files                  []string
	size                                                    int
	timeout                                                 time.Duration
	force, noSchema                                         bool
}

func newNewCmd() *cobra.Command {
	o := &newOptions{}
	cmd := &cobra.Command{
		Use:   "new <scenario.yaml | ->",
		Short: "Write a new scenario: a built-in to start from, or seed 004's test against your service",
		Long: `Write a new scenario file that validates and runs, and the JSON Schema beside it (` + scenarios.SchemaFile + `,
which the file's first line names, so an editor checks and completes it as you type).

With --from NAME it is a copy of a built-in scenario (see 'bulkhead list').

Otherwise it is seed 004's isolation test (tests: [isolation], docs/verdicts.md) against your
service, in two configurations, shared and split:
  --command 'PROG ARGS'      a command the runner starts for each configuration run. Write
                             {layout} where your service is told its layout: it becomes shared
                             or split. {port} is a free port the service must listen on,
                             {dep.NAME} the host:port it reaches dependency NAME at (its proxy).
  --url shared=URL --url split=URL
                             or two instances already running, one per layout.
  --endpoint /PATH=DEP[+DEP] the endpoints and the dependencies each calls (default /a=A, /b=B);
                             the faults hit the first endpoint's first dependency, and some
                             endpoint must not call it.
  --upstream DEP=HOST:PORT   a real dependency behind its proxy (default: a built-in fake).
  --size P                   the slots of either layout: one pool of P, or P divided among the
                             dependencies (stated in each target's layout: your service must
                             hold them).
The file is refused if it would not load; an existing file is kept unless --force.`,
		Example: `  bulkhead new my.yaml --from hypothesis
  bulkhead new my.yaml --command './svc --layout {layout} --port {port} --a http://{dep.A} --b http://{dep.B}' \
      --files svc --ready 'http://127.0.0.1:{port}/healthz' --metrics 'http://127.0.0.1:{port}/metrics'
  bulkhead new my.yaml --url shared=http://10.0.0.5:8080 --url split=http://10.0.0.5:8081 \
      --endpoint /orders=inventory --endpoint /track=shipping --upstream inventory=10.0.0.7:5432`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNew(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "start from this built-in scenario (bulkhead list)")
	f.StringVar(&o.name, "name", "", "the scenario's name (default: the file's name)")
	f.StringVar(&o.command, "command", "", "your service's command, quoted as a shell would; {layout} becomes shared or split")
	f.StringArrayVar(&o.env, "env", nil, "KEY=VALUE added to the command's environment ({layout} replaced too); repeatable")
	f.StringVar(&o.dir, "dir", "", "the command's working folder, relative to the scenario file")
	f.StringSliceVar(&o.files, "files", nil, "files or folders of --dir the command needs, copied into each run folder with their hashes")
	f.StringArrayVar(&o.urls, "url", nil, "LAYOUT=URL of an instance already running (shared= and split=)")
	f.StringVar(&o.ready, "ready", "", "URL polled until it answers 2xx before the load starts")
	f.StringVar(&o.metrics, "metrics", "", "your service's Prometheus /metrics URL, scraped into resources.csv")
	f.StringVar(&o.version, "version", "", "a command printing your service's version, recorded in each manifest")
	f.StringArrayVar(&o.endpoints, "endpoint", nil, "/PATH=DEP or /PATH=DEP+DEP; repeatable (default /a=A, /b=B)")
	f.StringArrayVar(&o.upstreams, "upstream", nil, "DEP=HOST:PORT, a real dependency (default: a built-in fake); repeatable")
	f.IntVar(&o.size, "size", 10, "P, the slots of either layout")
	f.StringVar(&o.rate, "rate", "50/s", "each endpoint's rate")
	f.DurationVar(&o.timeout, "timeout", 500*time.Millisecond, "the client timeout of every dependency call")
	f.BoolVar(&o.force, "force", false, "overwrite an existing file")
	f.BoolVar(&o.noSchema, "no-schema", false, "do not write "+scenarios.SchemaFile+" beside the scenario")
	return cmd
}

func runNew(cmd *cobra.Command, o *newOptions, path string) error {
	name := o.name
	if name == "" && path != "-" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	var out []byte
	var err error
	if o.from != "" {
		if o.command != "" || len(o.urls) > 0 || len(o.endpoints) > 0 {
			return usageError(errors.New("--from copies a built-in as it is: leave out --command, --url and --endpoint (edit the copy instead)"))
		}
		out, err = scenarios.FromBuiltin(o.from, name)
	} else {
		var sc scenarios.Scaffold
		if sc, err = o.scaffold(name); err == nil {
			target := path
			if path == "-" {
				target = "new.yaml"
			}
			out, err = sc.Write(target)
		}
	}
	if err != nil {
		return usageError(err)
	}
	if path == "-" {
		_, err := cmd.OutOrStdout().Write(out)
		return err
	}
	if _, err := os.Stat(path); err == nil && !o.force {
		return usageError(fmt.Errorf("%s exists: keeping it (--force overwrites it)", path))
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return err
	}
	schema := filepath.Join(filepath.Dir(path), scenarios.SchemaFile)
	if !o.noSchema {
		if err := os.WriteFile(schema, scenarios.JSONSchema(), 0o644); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "wrote %s", path)
	if !o.noSchema {
		fmt.Fprintf(w, " and %s (its JSON Schema, for your editor)", schema)
	}
	fmt.Fprintf(w, "\nnext: bulkhead validate %s; bulkhead plan %s; bulkhead run %s\n", path, path, path)
	return nil
}

// scaffold reads the flags into a scenarios.Scaffold.
func (o *newOptions) scaffold(name string) (scenarios.Scaffold, error) {
	sc := scenarios.Scaffold{Name: name, Dir: o.dir, Files: o.files, Ready: o.ready, Metrics: o.metrics, Size: o.size, Timeout: o.timeout}
	var err error
	if o.command != "" {
		if sc.Command, err = splitWords(o.command); err != nil {
			return sc, fmt.Errorf("--command: %w", err)
		}
	}
	if o.version != "" {
		if sc.Version, err = splitWords(o.version); err != nil {
			return sc, fmt.Errorf("--version: %w", err)
		}
	}
	if sc.Rate, err = loadgen.ParseRate(o.rate); err != nil {
		return sc, fmt.Errorf("--rate: %w", err)
	}
	if sc.Env, err = pairs("--env", o.env, "KEY=VALUE"); err != nil {
		return sc, err
	}
	if sc.URLs, err = pairs("--url", o.urls, "shared=URL"); err != nil {
		return sc, err
	}
	if sc.Upstreams, err = pairs("--upstream", o.upstreams, "DEP=HOST:PORT"); err != nil {
		return sc, err
	}
	for _, e := range o.endpoints {
		path, deps, ok := strings.Cut(e, "=")
		if !ok || !strings.HasPrefix(path, "/") || deps == "" {
			return sc, fmt.Errorf("--endpoint %q: want /PATH=DEP or /PATH=DEP+DEP", e)
		}
		sc.Endpoints = append(sc.Endpoints, scenarios.ScaffoldEndpoint{Path: path, Calls: strings.Split(deps, "+")})
	}
	return sc, nil
}

// pairs reads KEY=VALUE flags into a map; nil when there are none.
func pairs(flag string, kvs []string, form string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want %s", flag, kv, form)
		}
		out[k] = v
	}
	return out, nil
}

// splitWords splits a command line as a POSIX shell splits words: on unquoted spaces, with
// single quotes taken literally and double quotes and backslashes escaping. It expands nothing.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("an unclosed ' quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`an unclosed " quote`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 {
		return nil, errors.New("no program")
	}
	return out, nil
}
