package outcome_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// The contract lives in this leaf package so that the parts that read results never compile
// against the parts that produce them: the load generator, the run folder and the report import
// neither the service nor the scenario loader, and the report not the load generator (nor,
// through them, Prometheus or gobreaker). This test keeps that true.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		testenv.SkipOrFail(t, "go command not found")
	}
	const mod = "github.com/bulkheadlab/bulkhead/"
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"outcome", []string{mod}},
		{"loadgen", []string{mod + "service", mod + "scenarios", mod + "report"}},
		{"rundir", []string{mod + "service", mod + "scenarios", mod + "loadgen", mod + "report"}},
		// The scrape package reads any target's metrics; it knows the contract, not the service.
		{"scrape", []string{mod + "service", mod + "scenarios", mod + "loadgen", mod + "report", mod + "experiment"}},
		// A target kind is started from what the plan resolved; it never reads a scenario.
		{"target", []string{mod + "scenarios", mod + "experiment", mod + "report"}},
		{"report", []string{mod + "service", mod + "scenarios", mod + "loadgen", mod + "experiment",
			"github.com/prometheus/", "github.com/sony/gobreaker", "github.com/Shopify/toxiproxy"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "../"+r.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", r.pkg, err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == mod+r.pkg || (r.pkg == "outcome" && dep == mod+"outcome") {
					continue
				}
				for _, f := range r.forbidden {
					if strings.HasPrefix(dep, f) && !strings.HasPrefix(dep, mod+r.pkg+"/") {
						t.Errorf("%s compiles against %s (forbidden: %s)", r.pkg, dep, f)
					}
				}
			}
		})
	}
}
