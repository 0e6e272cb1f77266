package headline

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/report/verdict"
)

// run builds a run of the given layouts, each one configuration of two 10 s phases, "base" and
// "slow" (A +450ms), with /a calling A and /b calling B at 50/s. ok(layout, phase, endpoint)
// says which share of an endpoint's requests succeed (in 10 ms; failures are fast rejections).
func run(layouts []string, ok func(layout, phase, ep string) float64) *model.Summary {
	kinds := []model.Kind{model.NewKind("ok", "", "", ""), model.NewKind("rejected:full", "p", "full", "")}
	slow := faults.Fault{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * time.Millisecond}}
	s := &model.Summary{BucketS: 1}
	for _, name := range layouts {
		c := model.Configuration{Name: name, Config: name, Mode: name, Repetition: 1, Kinds: kinds, Requests: map[string][]model.Record{},
			Endpoints: []model.EndpointRun{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}}}
		for i, pn := range []string{"base", "slow"} {
			ph := model.Phase{Name: pn, Reached: true, Start: time.Duration(i) * 10 * time.Second, End: time.Duration(i+1) * 10 * time.Second,
				Endpoints: map[string]*model.Stats{}}
			if pn == "slow" {
				ph.Faults = []faults.Fault{slow}
			}
			c.Phases = append(c.Phases, ph)
		}
		for _, ep := range []string{"/a", "/b"} {
			var recs []model.Record
			for pi, ph := range c.Phases {
				share := ok(name, ph.Name, ep)
				var sl []model.Record
				for k := range 500 {
					r := model.Record{T: int64(ph.Start + time.Duration(k)*20*time.Millisecond), Lat: int64(10*time.Millisecond + time.Duration(k%7)*time.Millisecond)}
					if float64(k%100) >= 100*share {
						r.Key, r.Lat = 1, int64(time.Millisecond)
					}
					sl = append(sl, r)
				}
				c.Phases[pi].Endpoints[ep] = stats.Compute(sl, kinds, ph.End-ph.Start, &stats.Scratch{})
				recs = append(recs, sl...)
			}
			c.Requests[ep] = recs
		}
		s.Configurations = append(s.Configurations, c)
	}
	return s
}

// Shared starves /b while A stalls, split does not: the headline says so for the one fault
// phase, with every layout's figures and their intervals.
func TestHeadline(t *testing.T) {
	s := run([]string{"shared", "split", "adaptive"}, func(layout, phase, ep string) float64 {
		if phase == "slow" && layout == "shared" {
			return 0.4
		}
		return 1
	})
	h := Of(s, verdict.NewEstimator(s))
	if len(h) != 1 || h[0].Phase != "slow" || h[0].Fault != "A +450ms" || h[0].Endpoint != "/b" {
		t.Fatalf("headline = %+v, want one entry: /b in slow (A +450ms)", h)
	}
	var got []string
	for _, l := range h[0].Layouts {
		got = append(got, l.Configuration)
		// 500 successes bound a p99 from above; shared's 200 do not (a p99 needs 368).
		closed := l.Configuration != "shared"
		if l.SuccessRate == nil || l.SuccessP99MS == nil || l.SuccessP99MS.Lo == nil || (l.SuccessP99MS.Hi != nil) != closed || l.Requests != 500 || l.Why != "" {
			t.Errorf("%s = %+v, want both figures over 500 requests, the p99's upper end closed: %t", l.Configuration, l, closed)
		}
	}
	if strings.Join(got, " ") != "shared split adaptive" {
		t.Errorf("layouts %v, want every layout in the run's order", got)
	}
	if sh, sp := h[0].Layouts[0].SuccessRate, h[0].Layouts[1].SuccessRate; sh.Value != 0.4 || sp.Value != 1 || *sh.Hi >= *sp.Lo {
		t.Errorf("success rates shared %v, split %v: want 0.4 and 1, intervals apart", sh, sp)
	}
	if p99 := h[0].Layouts[0].SuccessP99MS; p99.Value != 16 {
		t.Errorf("shared p99 of successes = %v, want 16 ms (the fast failures left out)", p99)
	}
}

func TestEndpoints(t *testing.T) {
	all := func(string, string, string) float64 { return 1 }
	tests := []struct {
		name       string
		unaffected []string
		calls      []string // /b's dependencies
		want       string
	}{
		{"the declared unaffected endpoint", []string{"/a"}, []string{"B"}, "/a"},
		{"without roles, the endpoints that call no faulted dependency", nil, []string{"B"}, "/b"},
		{"when every endpoint calls one, all of them", nil, []string{"A"}, "/a /b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run([]string{"shared"}, all)
			s.Roles.Unaffected = tt.unaffected
			c := &s.Configurations[0]
			c.Endpoints[1].Calls = tt.calls
			if got := strings.Join(Endpoints(s, c, &c.Phases[1]), " "); got != tt.want {
				t.Errorf("endpoints %q, want %q", got, tt.want)
			}
		})
	}
}

// A layout whose endpoint never succeeded has no p99 and says why; a phase an interrupted run
// never reached has no figures at all.
func TestHeadlineNotMeasurable(t *testing.T) {
	s := run([]string{"shared", "split"}, func(layout, phase, ep string) float64 {
		if phase == "slow" && layout == "shared" {
			return 0
		}
		return 1
	})
	s.Configurations[1].Phases[1].Reached = false
	h := Of(s, verdict.NewEstimator(s))
	sh, sp := h[0].Layouts[0], h[0].Layouts[1]
	if sh.SuccessRate == nil || sh.SuccessRate.Value != 0 || sh.SuccessP99MS != nil || !strings.Contains(sh.Why, "no request succeeded") {
		t.Errorf("shared = %+v, want a 0 success rate, no p99 and why", sh)
	}
	if sp.SuccessRate != nil || sp.SuccessP99MS != nil || sp.Why != "the phase was not reached" {
		t.Errorf("split = %+v, want no figures: not reached", sp)
	}
	if got := Of(&model.Summary{}, nil); got != nil {
		t.Errorf("headline of a run without configurations = %v, want none", got)
	}
}
