package output

import (
	"fmt"
	"math"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// limitsSection is report.md's section on adaptive pools: for each configuration, pool and
// phase in which a limit moved, the limit before the phase's switch, its range, the level it
// settled at and the seconds it took, per repetition (model.LimitFigure). Empty when no pool's
// limit moves.
func limitsSection(s *model.Summary) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	for _, name := range model.GroupNames(s.Configurations) {
		members := model.Group(s.Configurations, name)
		type key struct {
			phase    int
			resource string
		}
		var keys []key
		figs := map[key][]*model.LimitFigure{}
		for _, c := range members {
			for pi := range c.Phases {
				for i := range c.Phases[pi].Limits {
					f := &c.Phases[pi].Limits[i]
					k := key{pi, f.Resource}
					if figs[k] == nil {
						keys = append(keys, k)
					}
					figs[k] = append(figs[k], f)
				}
			}
		}
		var rows []string
		for _, k := range keys {
			moved := false
			for _, f := range figs[k] {
				moved = moved || f.Max-f.Min > 1e-9 || math.Abs(f.Before-f.Final) > 1e-9
			}
			if !moved {
				continue
			}
			ph := members[0].Phases[k.phase]
			var before, lo, hi, final, settle []string
			for _, f := range figs[k] {
				before = append(before, num(f.Before))
				lo, hi = append(lo, num(f.Min)), append(hi, num(f.Max))
				final = append(final, num(f.Final))
				if f.SettleS == nil {
					settle = append(settle, "still moving")
				} else {
					settle = append(settle, fmt.Sprintf("%.1f", *f.SettleS))
				}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s (%s) | %s | %s | %s | %s |\n", strings.TrimPrefix(k.resource, "pool:"),
				ph.Name, switchText(ph), strings.Join(before, ", "), ranges(lo, hi), strings.Join(final, ", "), strings.Join(settle, ", ")))
		}
		if len(rows) == 0 {
			continue
		}
		if b.Len() == 0 {
			w("## Adaptive limits\n\n")
			w("How each adaptive pool's limit moved after each fault switch, from resources.csv's mean_capacity (each interval's time-weighted mean limit). ")
			w("\"settled at\" is the mean over the phase's last quarter; \"settled after\" the seconds from the switch to the end of the last interval more than max(1 slot, 10%%) away from it, ")
			w("\"still moving\" when an interval of the last quarter was. One value per repetition; pools and phases in which no limit moved are left out.\n\n")
		}
		w("**%s**\n\n| pool | phase (switch) | limit before | range | settled at | settled after (s) |\n|---|---|---|---|---|---|\n", name)
		for _, r := range rows {
			b.WriteString(r)
		}
		w("\n")
	}
	return b.String()
}

// switchText says what the switch starting ph did: its faults, or that they were removed.
func switchText(ph model.Phase) string {
	if len(ph.Faults) == 0 {
		return "faults off"
	}
	var fs []string
	for _, f := range ph.Faults {
		fs = append(fs, f.String())
	}
	return strings.Join(fs, ", ")
}

// ranges writes per-repetition ranges "8–10, 8–10".
func ranges(lo, hi []string) string {
	out := make([]string, len(lo))
	for i := range lo {
		if lo[i] == hi[i] {
			out[i] = lo[i]
		} else {
			out[i] = lo[i] + "–" + hi[i]
		}
	}
	return strings.Join(out, ", ")
}

// num writes a limit with at most one decimal.
func num(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
