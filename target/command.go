package target

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/scrape"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// Command is the kind of a target the runner starts for each configuration run and stops when
// it ends: a user's service, run under the process supervisor.
//
//	target:
//	  command: [node, server.js, --port, "{port}", --a, "http://{dep.A}"]
//	  dir: ../service            # relative to the scenario file
//	  env: {POOL: shared}
//	  ready: http://127.0.0.1:{port}/healthz
//	  metrics: http://127.0.0.1:{port:stats}/metrics
type Command struct{}

// CommandParams are a command target's own keys.
type CommandParams struct {
	// Command is the argv started for this configuration only, stopped when it ends.
	Command []string `yaml:"command" scenario:"required"`
	// Dir is Command's working directory, relative to the scenario file; "" means its folder.
	Dir string `yaml:"dir,omitempty"`
	// Env adds variables to Command's environment.
	Env map[string]string `yaml:"env,omitempty"`
	// Files are the files (or folders) in Dir the command needs: its program if it is a script,
	// the config it reads. The runner copies them into the run folder with their SHA-256 and
	// starts the command there, so that the run folder's scenario.yaml re-runs what ran; a
	// command needing a file not listed then fails to start. Paths are relative to Dir and stay
	// inside it. Left out, the command runs in Dir itself, and the scenario as run names Dir by
	// its absolute path (it re-runs on this machine only).
	Files []string `yaml:"files,omitempty"`
}

func init() { Register(Command{}) }

var _ Kind = Command{}

func (Command) Name() string { return "command" }
func (Command) Key() string  { return "command" }
func (Command) Doc() string {
	return "a command the runner starts for each configuration run (your service), reached at url or http://127.0.0.1:{port}"
}
func (Command) NewParams() any { return &CommandParams{} }
func (Command) Remote() bool   { return false }

var _ Files = Command{}

// Check refuses a command without a program, and files that are not local paths inside dir.
func (Command) Check(c *Config) []Problem {
	p, _ := c.Params.(*CommandParams)
	if p == nil || len(p.Command) == 0 || p.Command[0] == "" {
		return []Problem{{"command", "needs the program to run, then its arguments"}}
	}
	var out []Problem
	for i, f := range p.Files {
		if !filepath.IsLocal(f) {
			out = append(out, Problem{fmt.Sprintf("files[%d]", i), fmt.Sprintf("%q is not a path inside dir (no .., not absolute, not empty)", f)})
		}
	}
	return out
}

// Files returns the command's dir and files.
func (Command) Files(c *Config) (string, []string) {
	p := commandParams(c)
	return p.Dir, p.Files
}

// MovedTo returns a copy of c whose dir is dir.
func (Command) MovedTo(c *Config, dir string) *Config {
	out := *c
	p := *commandParams(c)
	p.Dir = dir
	out.Params = &p
	return &out
}

func commandParams(c *Config) *CommandParams {
	if p, ok := c.Params.(*CommandParams); ok && p != nil {
		return p
	}
	return &CommandParams{}
}

// Start fills the placeholders of the target's command, env, url, ready and metrics ({port}:
// spec.Addr's port or a port free on this host's loopback; {port:NAME}: another free port each),
// starts the command in its dir (relative to spec.Dir) with its output in spec.Folder, and blocks
// until ready answers 2xx (or, with no ready, until the target's address accepts connections:
// url's host and port, http://127.0.0.1:{port} without url), the command exits,
// DefaultReadyTimeout passes or ctx ends. On error the process is stopped and the error names
// the configuration, the command and the address.
func (Command) Start(ctx context.Context, spec Spec) (Target, error) {
	t := spec.Config
	if t == nil {
		return nil, fmt.Errorf("%s: no command", who(spec))
	}
	cp := commandParams(t)
	if len(cp.Command) == 0 {
		return nil, fmt.Errorf("%s: no command", who(spec))
	}
	strs := append(slices.Clone(cp.Command), t.URL, t.Ready, t.Metrics)
	for _, v := range cp.Env {
		strs = append(strs, v)
	}
	ports := map[string]string{}
	names := PortNames(strs...)
	if !slices.Contains(names, "") {
		names = append(names, "") // the default url needs {port}
	}
	for _, name := range names {
		addr := ""
		if name == "" {
			addr = spec.Addr
		}
		p, err := pickPort(addr, ports)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", who(spec), err)
		}
		ports[name] = p
	}
	deps := depAddrs(spec)
	exp := func(field, s string) (string, error) {
		v, err := ExpandAt(s, "127.0.0.1", ports, deps)
		if err != nil {
			return "", fmt.Errorf("%s.%s: %w", who(spec), field, err)
		}
		return v, nil
	}
	out := t.Outcomes
	rec := Record{Kind: Command{}.Name(), Outcomes: &out, Env: map[string]string{}}
	for i, a := range cp.Command {
		v, err := exp(fmt.Sprintf("command[%d]", i), a)
		if err != nil {
			return nil, err
		}
		rec.Command = append(rec.Command, v)
	}
	var env []string
	for _, k := range slices.Sorted(mapsKeys(cp.Env)) {
		v, err := exp("env."+k, cp.Env[k])
		if err != nil {
			return nil, err
		}
		rec.Env[k] = v
		env = append(env, k+"="+v)
	}
	var err error
	if rec.Ready, err = exp("ready", t.Ready); err != nil {
		return nil, err
	}
	if rec.Metrics, err = exp("metrics", t.Metrics); err != nil {
		return nil, err
	}
	rec.URL = "http://127.0.0.1:" + ports[""]
	if t.URL != "" {
		if rec.URL, err = exp("url", t.URL); err != nil {
			return nil, err
		}
		rec.URL = strings.TrimSuffix(rec.URL, "/")
	}
	rec.Dir = commandDir(spec.Dir, cp.Dir)
	rec.Description = "command `" + strings.Join(rec.Command, " ") + "`"
	if rec.Metrics != "" {
		rec.Description += ", resources scraped from " + rec.Metrics
	}
	s := supervise.Spec{Name: who(spec), Argv: rec.Command, Env: env, Dir: rec.Dir, Ready: rec.Ready, ReadyTimeout: DefaultReadyTimeout}
	if spec.Folder != "" {
		s.Stdout, s.Stderr = filepath.Join(spec.Folder, StdoutFile), filepath.Join(spec.Folder, StderrFile)
	}
	proc, err := supervise.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	e := &External{rec: rec, proc: proc}
	e.rec.Pid = proc.Pid()
	if t.Ready == "" {
		if err := waitListening(ctx, proc, rec.URL); err != nil {
			proc.Stop()
			return nil, fmt.Errorf("%s %q: %w", who(spec), strings.Join(rec.Command, " "), err)
		}
	}
	if rec.Metrics != "" {
		if e.scraper, err = scrape.New(rec.Metrics, t.Scrape, nil); err != nil {
			proc.Stop()
			return nil, fmt.Errorf("%s: %w", who(spec), err)
		}
	}
	return e, nil
}

// commandDir is dir relative to base, the scenario file's folder ("" means the working
// directory).
func commandDir(base, dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	if base == "" {
		base = "."
	}
	return filepath.Join(base, dir)
}
