package ingest

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The pooled partners' resources become one resource per prefix and sample: in-use and capacity
// of the fullest member, rejections summed; the faulted partner's and process resources stay.
func TestGroupResources(t *testing.T) {
	s := func(t time.Duration, name string, capacity, inUse float64, rejected uint64) rundir.ResourceSample {
		return rundir.ResourceSample{T: t, Resource: name, Capacity: capacity, InUse: inUse, Rejected: rejected}
	}
	in := []rundir.ResourceSample{
		s(0, "pool:w", 20, 20, 3), s(0, "pool:p1", 20, 1, 0), s(0, "pool:p2", 20, 4, 2), s(0, "conns:p1", 0, 1, 0), s(0, "conns:p2", 0, 2, 0), s(0, "goroutines", 0, 99, 0),
		s(time.Second, "pool:w", 20, 5, 3), s(time.Second, "pool:p1", 20, 7, 1), s(time.Second, "pool:p2", 20, 0, 2), s(time.Second, "conns:p1", 0, 1, 0), s(time.Second, "conns:p2", 0, 1, 0), s(time.Second, "goroutines", 0, 98, 0),
	}
	pools := []model.PoolInfo{{Name: "w", Dependencies: []string{"w"}}, {Name: "p1", Dependencies: []string{"p1"}}, {Name: "p2", Dependencies: []string{"p2"}}}
	got := groupResources(in, "others (2)", map[string]bool{"p1": true, "p2": true}, pools)
	want := []rundir.ResourceSample{
		s(0, "pool:w", 20, 20, 3), s(0, "pool:others (2)", 20, 4, 2), s(0, "conns:others (2)", 0, 2, 0), s(0, "goroutines", 0, 99, 0),
		s(time.Second, "pool:w", 20, 5, 3), s(time.Second, "pool:others (2)", 20, 7, 3), s(time.Second, "conns:others (2)", 0, 1, 0), s(time.Second, "goroutines", 0, 98, 0),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groupResources =\n%+v\nwant\n%+v", got, want)
	}
}

func TestGroupList(t *testing.T) {
	groups := []model.EndpointGroup{{Name: "others (2)", Members: []string{"/p/1", "/p/2"}}}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"members collapse into their group once", []string{"/p/1", "/p/2"}, []string{"others (2)"}},
		{"endpoints on their own stay", []string{"/p/w", "/p/1"}, []string{"/p/w", "others (2)"}},
		{"nothing in, nothing out", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupList(tt.in, groups); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("groupList(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
