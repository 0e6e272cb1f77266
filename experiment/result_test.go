package experiment

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// Result.add lists the configuration runs whose load generator fell behind (send lag p99 over
// the limit, or drops) from their manifests, and the largest steal; an interrupted run that kept
// its schedule is invalid without being behind.
func TestResultBehind(t *testing.T) {
	steal := 0.03
	r := &Result{Valid: true, Steal: -1}
	r.add("ok", &rundir.Manifest{Valid: true, LagLimit: 10 * time.Millisecond, Endpoints: []rundir.Endpoint{{LagP99: 9 * time.Millisecond}}})
	r.add("cut", &rundir.Manifest{Partial: true, Invalid: []string{"interrupted before the end of the time line"}, Endpoints: []rundir.Endpoint{{}}})
	r.add("late", &rundir.Manifest{Invalid: []string{"lag"}, Endpoints: []rundir.Endpoint{{}, {LagP99: 2 * time.Millisecond}}, Load: &rundir.Load{Steal: &steal}})
	r.add("drops", &rundir.Manifest{Invalid: []string{"dropped"}, LagLimit: time.Second, Endpoints: []rundir.Endpoint{{Dropped: 1}}})
	if want := []string{"late", "drops"}; !reflect.DeepEqual(r.Behind, want) || r.Steal != steal || r.Valid {
		t.Errorf("behind %v, steal %v, valid %t; want %v, %v, false", r.Behind, r.Steal, r.Valid, want, steal)
	}
}
