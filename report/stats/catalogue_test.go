package stats

import (
	"testing"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// The figures aggregated across repetitions (summary.json's aggregates) are named as the claim
// metrics they are: one name per figure, the catalogue's.
func TestAggregatedFiguresAreCatalogued(t *testing.T) {
	for name := range figures(&model.Stats{}) {
		if _, ok := claim.Lookup(name, true); !ok {
			t.Errorf("aggregate figure %q is not an endpoint metric of claim.Catalogue", name)
		}
	}
}
