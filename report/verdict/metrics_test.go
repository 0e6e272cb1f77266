package verdict

import (
	"testing"

	"github.com/bulkheadlab/bulkhead/claim"
)

// Every metric of the catalogue has its point function and its spread function, of the interval
// method the catalogue states; a rate also has its counts (the binomial floor); and the engine
// implements nothing the catalogue does not list.
func TestEveryCatalogueMetricIsImplemented(t *testing.T) {
	for _, entry := range claim.Catalogue {
		impl, ok := implOf(entry)
		switch {
		case !ok:
			t.Errorf("%s metric %q is catalogued but has no implementation", entry.Subject, entry.Name)
		case impl.point == nil || impl.spread == nil:
			t.Errorf("%s metric %q lacks its point or its spread function", entry.Subject, entry.Name)
		case impl.kind != entry.Interval:
			t.Errorf("%s metric %q is implemented as %q, catalogued as %q", entry.Subject, entry.Name, impl.kind, entry.Interval)
		case (impl.counts != nil) != (entry.Interval == claim.IntervalRate):
			t.Errorf("%s metric %q: a rate needs its counts, and only a rate has them", entry.Subject, entry.Name)
		}
	}
	for subject, byName := range impls {
		for name := range byName {
			if _, ok := claim.Lookup(name, subject == claim.OfEndpoint); !ok {
				t.Errorf("%s metric %q is implemented but not catalogued", subject, name)
			}
		}
	}
}
