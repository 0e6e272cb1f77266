package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// readClaims returns the claims the runner recorded in the run folder (claims.json), or a note
// saying why they cannot be judged. A folder without claims.json has no claims and no note when
// its run recorded none (a scenario without claims, an older run); when run.json records claims
// (Run.ClaimIDs), a missing claims.json is never "no claims": the note says they are missing.
func readClaims(runDir string, run *rundir.Run) ([]claim.Claim, string) {
	var cs []claim.Claim
	err := rundir.ReadJSON(filepath.Join(runDir, rundir.ClaimsFile), &cs)
	if errors.Is(err, fs.ErrNotExist) {
		if len(run.ClaimIDs) > 0 {
			return nil, fmt.Sprintf("claims not judged: %s is missing, yet the run recorded %d claim(s)", rundir.ClaimsFile, len(run.ClaimIDs))
		}
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("claims not judged: read %s: %v", rundir.ClaimsFile, err)
	}
	return cs, ""
}

// claimsProblem returns why the claims read from claims.json (err: why they could not be read)
// are not the ones the run recorded (Run.ClaimIDs): a file that does not decode, or other ids.
// "" when they are, or when claims.json is missing (VerifyRun says that).
func claimsProblem(runDir string, run *rundir.Run, cs []claim.Claim, note string) string {
	if _, err := os.Stat(filepath.Join(runDir, rundir.ClaimsFile)); err != nil {
		return ""
	}
	if note != "" {
		return fmt.Sprintf("%v: %s: does not decode, so the run's claims are unknown", rundir.ErrIntegrity, rundir.ClaimsFile)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	if len(run.Files) > 0 && !slices.Equal(ids, run.ClaimIDs) {
		return fmt.Sprintf("%v: %s: holds claims %v; the run recorded %v", rundir.ErrIntegrity, rundir.ClaimsFile, ids, run.ClaimIDs)
	}
	return ""
}

// readRoles returns the roles the scenario declared (roles.json), empty when it declared none,
// or a note saying why they cannot be read.
func readRoles(runDir string) (model.Roles, string) {
	var r claim.Roles
	err := rundir.ReadJSON(filepath.Join(runDir, rundir.RolesFile), &r)
	if errors.Is(err, fs.ErrNotExist) {
		return model.Roles{}, ""
	}
	if err != nil {
		return model.Roles{}, fmt.Sprintf("roles not read: read %s: %v", rundir.RolesFile, err)
	}
	out := model.Roles{Shared: r.Shared, Split: r.Split, FaultDependency: r.FaultDependency, Baseline: r.Baseline,
		LatencyPhase: r.LatencyPhase, ErrorPhase: r.ErrorPhase, NormalLoad: r.NormalLoad}
	if r.Affected != "" {
		out.Affected = []string{r.Affected}
	}
	if r.Unaffected != "" {
		out.Unaffected = []string{r.Unaffected}
	}
	return out, ""
}

// claimEndpoints returns the endpoints whose requests the claims measure (endpoint and
// level_of of every measure, its minus:/over:, than: and preconditions).
func claimEndpoints(claims []claim.Claim) map[string]bool {
	keep := map[string]bool{}
	add := func(m *claim.Measure) {
		for _, x := range []*claim.Measure{m, m.Other()} {
			if x != nil {
				if x.Endpoint != "" {
					keep[x.Endpoint] = true
				}
				if x.LevelOf != "" {
					keep[x.LevelOf] = true
				}
			}
		}
	}
	for _, c := range claims {
		for _, q := range append([]claim.Condition{c.Condition}, c.Require...) {
			add(&q.Measure)
			if q.Than != nil {
				add(q.Than)
			}
		}
	}
	return keep
}
