package experiment

import (
	"context"
	"fmt"
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

// load is a configuration's running load, whichever process it runs in: what execute,
// runTimeLine and the progress board use of it.
type load interface {
	// T0 is the time line's zero (wall clock).
	T0() time.Time
	// Progress is each attack's live account; it does not block.
	Progress() []loadgen.Progress
	// Stop stops sending; it does not block.
	Stop()
	// Wait blocks until every result is written and returns the checks (loadgen.Run.Wait).
	Wait() ([]loadgen.Check, error)
	// Pooled is the check over every attack's sends; call it after Wait.
	Pooled() loadgen.Check
}

var (
	_ load = (*loadgen.Run)(nil)
	_ load = (*attack.Process)(nil)
)

// startLoad starts p's load against the target at base in the given layout: in this process,
// writing to out's raw files, or as a child process that writes the raw files of the
// configuration folder dir itself. It returns the running load and the manifest's account of it.
func startLoad(ctx context.Context, p *Plan, dir, base, layout string, out *outputs, lopts []loadgen.Opt, opts Options) (load, *rundir.Load, error) {
	if layout != LoadProcess {
		lr, err := loadgen.Start(ctx, out.attacks(p, base), p.Duration, lopts...)
		return lr, &rundir.Load{Layout: LoadInProcess}, err
	}
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
			return nil, nil, err
		}
		spec.Attacks = append(spec.Attacks, as)
	}
	exe := opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("find this program to start the load generator from: %w", err)
		}
	}
	name := "configuration " + p.Folder + ": load generator"
	env := childEnv(p, os.Getenv)
	pr, err := attack.Start(ctx, spec, attack.Options{Name: name, Argv: []string{exe, "attack"}, Env: env, Dir: dir})
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
