package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Where a configuration's load generator runs (Options.Load).
const (
	// LoadInProcess runs it inside the runner's process (a *loadgen.Run).
	LoadInProcess = rundir.LoadInProcess
	// LoadProcess runs it as a child process of the same binary (`bulkhead attack`), supervised.
	LoadProcess = rundir.LoadProcess
)

// ParseLoad returns the load layout named by s ("inprocess" or "process"; "" means the default,
// returned as ""). Anything else is an error naming the text.
func ParseLoad(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", LoadInProcess, LoadProcess:
		return v, nil
	}
	return "", fmt.Errorf("load layout %q: want %s or %s", s, LoadInProcess, LoadProcess)
}

var (
	_ Load = (*loadgen.Run)(nil)
	_ Load = (*attack.Process)(nil)
	_ Load = (*attack.Shards)(nil)
	// Figures that come from a child's reports can grow old (the progress board marks them).
	_ aging = (*attack.Process)(nil)
	_ aging = (*attack.Shards)(nil)
)

// startLoad starts p's load against the target at base in the given layout: in this process,
// writing to raw, or as a child process that writes the raw files of the
// configuration folder dir itself (raw is then nil). It returns the running load and the manifest's account of it.
func startLoad(ctx context.Context, p *Plan, dir, base, layout string, raw []io.Writer, lopts []loadgen.Opt, opts Options) (Load, *rundir.Load, error) {
	if layout != LoadProcess {
		attacks := make([]loadgen.Attack, len(p.Attacks))
		for i, a := range p.Attacks {
			attacks[i] = loadgen.Attack{Name: a.Path, URL: base + a.Path, Pacer: a.Pacer, Out: raw[i]}
		}
		lr, err := loadgen.Start(ctx, attacks, p.Duration, lopts...)
		return lr, &rundir.Load{Layout: LoadInProcess}, err
	}
	spec, err := p.AttackSpec(base, lopts)
	if err != nil {
		return nil, nil, err
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("find this program to start the load generator from: %w", err)
		}
	}
	name := "configuration " + p.Folder + ": load generator"
	env := childEnv(p, os.Getenv)
	ao := attack.Options{Name: name, Argv: []string{exe, "attack"}, Env: env, Dir: dir}
	if opts.Shards > 1 {
		sh, err := attack.StartShards(ctx, spec, opts.Shards, ao)
		if err != nil {
			return nil, nil, err
		}
		rec := &rundir.Load{Layout: LoadProcess, Command: []string{exe, "attack", "--segment", fmt.Sprintf("k/%d", opts.Shards)}, Env: env, PID: sh.Pids()[0],
			Spec: sh.SpecFiles()[0]}
		for k := range opts.Shards {
			_, stdout, stderr := attack.Files(loadgen.Shard{Index: k, Count: opts.Shards})
			rec.Logs = append(rec.Logs, stdout, stderr)
		}
		return sh, rec, nil
	}
	pr, err := attack.Start(ctx, spec, ao)
	if err != nil {
		return nil, nil, err
	}
	rec := &rundir.Load{Layout: LoadProcess, Command: pr.Argv(), Env: env, PID: pr.Pid(), Spec: attack.SpecFile,
		Logs: []string{attack.StdoutFile, attack.StderrFile}}
	// The command is recorded relative to the configuration folder where it lies inside it.
	if rel, err := filepath.Rel(dir, rec.Command[len(rec.Command)-1]); err == nil && !strings.HasPrefix(rel, "..") {
		rec.Command[len(rec.Command)-1] = rel
	}
	return pr, rec, nil
}

// childEnv is what a load generator child of p gets added to its environment: the runner's
// garbage collection setting (gc.go), which a child does not inherit (with hundreds of attacks
// its heap is mostly the requests in flight).
func childEnv(p *Plan, env func(string) string) []string {
	if pct := gcPercentFor([]*Plan{p}, env); pct > 0 {
		return []string{"GOGC=" + strconv.Itoa(pct)}
	}
	return nil
}

// AttackSpec is p's load as `bulkhead attack` runs it, aimed at the target at base: every
// attack's pacer, raw file and URL, the load generator's settings and the target's outcome
// mapping. Every engine that runs the load in another process builds it here.
func (p *Plan) AttackSpec(base string, lopts []loadgen.Opt) (attack.Spec, error) {
	// Progress once a second: what the live board redraws at; more would only fill the child's
	// stdout log (500 attacks x ~100 bytes an event).
	spec := attack.Spec{Configuration: p.Folder, Duration: p.Duration, Load: loadgen.Resolve(lopts...), ProgressEvery: time.Second}
	if t := p.Configuration.Target; t != nil {
		m := t.Outcomes
		spec.Outcomes = &m
	}
	for i, a := range p.Attacks {
		as, err := attack.NewAttackSpec(a.Path, base+a.Path, a.Pacer, p.Manifest.Endpoints[i].RawFile)
		if err != nil {
			return attack.Spec{}, err
		}
		spec.Attacks = append(spec.Attacks, as)
	}
	return spec, nil
}
