package output

import (
	"fmt"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// table is a table as data, so that report.md and report.html show the same rows: a header and
// rows of cells; a row with fewer cells than the header spans its last cell over the rest.
type table struct {
	head []string
	rows [][]string
}

// markdown renders t as a markdown table.
func (t table) markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// phaseTable is the per-phase numbers of phase pi: one row per configuration and endpoint.
func phaseTable(s *model.Summary, pi int) table {
	t := table{head: []string{"configuration", "endpoint", "requests", "success", "p50", "p90", "p99", "p99.9", "max", "ok p99", "fail p99",
		"timeout", "rejected at once", "rejected after waiting", "upstream", "connection", "other", "ok/s"}}
	for _, c := range s.Configurations {
		if pi >= len(c.Phases) {
			continue
		}
		if ph := c.Phases[pi]; !ph.Reached {
			t.rows = append(t.rows, []string{c.Name, ph.Sentence})
			continue
		}
		for _, ep := range c.EndpointPaths() {
			st := c.Phases[pi].Endpoints[ep]
			if st == nil {
				continue
			}
			t.rows = append(t.rows, []string{c.Name, ep, fmt.Sprint(st.Requests), rate1(st), f1n(st.P50MS, st.Successes), f1n(st.P90MS, st.Successes),
				f1n(st.P99MS, st.Successes), f1n(st.P999MS, st.Successes), f1n(st.MaxMS, st.Successes),
				f1n(st.Success.P99MS, st.Success.Count), f1n(st.Failure.P99MS, st.Failure.Count), fmt.Sprint(st.Errors.Timeout),
				fmt.Sprint(st.Errors.RejectedRefused), fmt.Sprint(st.Errors.RejectedWaited), fmt.Sprint(st.Errors.Upstream),
				fmt.Sprint(st.Errors.Connection), fmt.Sprint(st.Errors.Other), f1(st.ThroughputRPS)})
		}
	}
	return t
}

// validityTable is the load generator's account of itself per configuration and endpoint (or
// endpoint group).
func validityTable(s *model.Summary) table {
	t := table{head: []string{"configuration", "endpoint", "scheduled", "sent", "dropped", "lag p99 (ms)", "lag max (ms)"}}
	for _, c := range s.Configurations {
		member := c.Members()
		for _, e := range c.Endpoints {
			if member[e.Path] == "" {
				t.rows = append(t.rows, []string{c.Name, e.Path, fmt.Sprint(e.Scheduled), fmt.Sprint(e.Sent), fmt.Sprint(e.Dropped),
					fmt.Sprintf("%.2f", e.LagP99MS), fmt.Sprintf("%.2f", e.LagMaxMS)})
			}
		}
		for _, g := range c.EndpointGroups {
			inv := ""
			if len(g.InvalidMembers) > 0 {
				inv = fmt.Sprintf(", %d invalid", len(g.InvalidMembers))
			}
			t.rows = append(t.rows, []string{c.Name, g.Name + inv, fmt.Sprint(g.Scheduled), fmt.Sprint(g.Sent), fmt.Sprint(g.Dropped),
				fmt.Sprintf("%.2f (worst member: %s)", g.LagP99MS, g.LagWorst), fmt.Sprintf("%.2f", g.LagMaxMS)})
		}
	}
	return t
}
