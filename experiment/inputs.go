package experiment

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// asRun copies into the run folder dir the files each configuration's target names (a kind
// with target.Files: a command's files:) and returns the scenario as it runs from that folder,
// so that <dir>/scenario.yaml re-runs what ran: a copy of sc whose Path is dir's scenario file
// and whose targets start from the copies (folder rundir.TargetFilesDir/<configuration>,
// relative to the run folder) or, for a target that names no files, from its own folder by its
// absolute path (the scenario as run then re-runs on this machine only). It returns sc itself
// when no target has a folder, and an error naming the configuration when a file cannot be
// copied. The copies are recorded in run.json with the other inputs (rundir.RecordInputs).
func asRun(sc *scenarios.Scenario, dir string) (*scenarios.Scenario, error) {
	out := *sc
	out.Configurations = slices.Clone(sc.Configurations)
	moved := false
	for i, c := range out.Configurations {
		t := c.TargetConfig()
		if t == nil {
			continue
		}
		k, err := target.Of(t)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		fk, ok := k.(target.Files)
		if !ok {
			continue
		}
		src, files := fk.Files(t)
		if !filepath.IsAbs(src) {
			src = filepath.Join(sc.Dir(), src)
		}
		to, err := filepath.Abs(src)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		if len(files) > 0 {
			if _, err := rundir.CopyInputs(dir, c.Name, src, files); err != nil {
				return nil, fmt.Errorf("configuration %s: target files: %w", c.Name, err)
			}
			to = filepath.ToSlash(filepath.Join(rundir.TargetFilesDir, c.Name))
		}
		nt := *c.Target
		nt.Config = *fk.MovedTo(t, to)
		out.Configurations[i].Target = &nt
		moved = true
	}
	if !moved {
		return sc, nil
	}
	out.Path = filepath.Join(dir, rundir.ScenarioFile)
	return &out, nil
}

// runFrom points every plan at sc as run (asRun): its scenario, and its configuration's target
// started from the run folder's copies. Nothing else of a plan changes.
func runFrom(plans []*Plan, sc *scenarios.Scenario) {
	for _, p := range plans {
		p.Scenario = sc
		for _, c := range sc.Configurations {
			if c.Name == p.Configuration.Name {
				p.Configuration.Target = c.Target
			}
		}
	}
}
