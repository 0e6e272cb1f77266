package report

import (
	"math"
	"slices"
)

// aggregate computes, per configuration name across its repetitions, the mean and 95% CI of
// every figure and its spread (min, median, max), in the order configurations first appear.
func aggregate(cfgs []Configuration) []Aggregate {
	var out []Aggregate
	for _, name := range groupNames(cfgs) {
		members := group(cfgs, name)
		ag := Aggregate{Config: name, Mode: members[0].Mode, Repetitions: len(members)}
		for pi, ph := range members[0].Phases {
			ap := AggregatePhase{Name: ph.Name, Endpoints: map[string]map[string]Figure{}}
			for ep := range ph.Endpoints {
				vals := map[string][]float64{}
				for _, m := range members {
					if pi >= len(m.Phases) || m.Phases[pi].Endpoints[ep] == nil {
						continue
					}
					for k, v := range figures(m.Phases[pi].Endpoints[ep]) {
						vals[k] = append(vals[k], v)
					}
				}
				figs := map[string]Figure{}
				for k, xs := range vals {
					figs[k] = meanCI(xs)
				}
				ap.Endpoints[ep] = figs
			}
			ag.Phases = append(ag.Phases, ap)
		}
		out = append(out, ag)
	}
	return out
}

func groupNames(cfgs []Configuration) []string {
	var names []string
	for _, c := range cfgs {
		if !slices.Contains(names, c.Config) {
			names = append(names, c.Config)
		}
	}
	return names
}

func group(cfgs []Configuration, name string) []*Configuration {
	var out []*Configuration
	for i := range cfgs {
		if cfgs[i].Config == name {
			out = append(out, &cfgs[i])
		}
	}
	return out
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
