package stats

import "github.com/bulkheadlab/bulkhead/report/model"

// Aggregate computes, per configuration name across its repetitions, the mean and 95% CI of
// every figure and its spread (min, median, max), in the order configurations first appear.
func Aggregate(cfgs []model.Configuration) []model.Aggregate {
	var out []model.Aggregate
	for _, name := range model.GroupNames(cfgs) {
		members := model.Group(cfgs, name)
		ag := model.Aggregate{Config: name, Mode: members[0].Mode, Repetitions: len(members)}
		for pi, ph := range members[0].Phases {
			ap := model.AggregatePhase{Name: ph.Name, Endpoints: map[string]map[string]model.Figure{}}
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
				figs := map[string]model.Figure{}
				for k, xs := range vals {
					figs[k] = MeanCI(xs)
				}
				ap.Endpoints[ep] = figs
			}
			ag.Phases = append(ag.Phases, ap)
		}
		out = append(out, ag)
	}
	return out
}
