package target

import (
	"context"
	"fmt"
	"strings"
)

// URL is the kind of a target already running (started by its user, on this host or another,
// or a Kubernetes Service): the runner checks it answers and sends the load to it as it is.
//
//	target:
//	  url: http://10.0.0.5:8080
//	  metrics: http://10.0.0.5:9090/metrics
type URL struct{}

func init() { Register(URL{}) }

var _ Kind = URL{}

func (URL) Name() string   { return "url" }
func (URL) Key() string    { return "url" }
func (URL) Doc() string    { return "a service already running, reached at url" }
func (URL) NewParams() any { return nil }
func (URL) Remote() bool   { return true }

// Check refuses a URL target without url, and ports it would have to choose: it runs already.
func (URL) Check(c *Config) []Problem {
	var out []Problem
	if c.URL == "" {
		out = append(out, Problem{"url", "a url target needs the url it is reached at"})
	}
	for _, f := range []struct{ key, val string }{{"url", c.URL}, {"ready", c.Ready}, {"metrics", c.Metrics}} {
		if len(PortNames(f.val)) > 0 {
			out = append(out, Problem{f.key, "{port} is for command targets and image targets; a url target's port is fixed"})
		}
		if strings.Contains(f.val, HostPlaceholder) {
			out = append(out, Problem{f.key, "{host} is for command targets and image targets; a url target's host is fixed"})
		}
	}
	return out
}

// Start fills the placeholders ({dep.NAME}) of the target's url, ready and metrics and checks
// the service answers: ready with 2xx, or (no ready) the URL with any HTTP answer, within
// DefaultReadyTimeout or ctx. The error names the configuration and the address.
func (URL) Start(ctx context.Context, spec Spec) (Target, error) {
	t := spec.Config
	if t == nil || t.URL == "" {
		return nil, fmt.Errorf("%s: no url", who(spec))
	}
	deps := depAddrs(spec)
	out := t.Outcomes
	rec := Record{Kind: URL{}.Name(), Outcomes: &out}
	var err error
	for _, f := range []struct {
		name string
		src  string
		dst  *string
	}{{"url", t.URL, &rec.URL}, {"ready", t.Ready, &rec.Ready}, {"metrics", t.Metrics, &rec.Metrics}} {
		if *f.dst, err = Expand(f.src, nil, deps); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", who(spec), f.name, err)
		}
	}
	rec.URL = strings.TrimSuffix(rec.URL, "/")
	rec.Description = "url " + rec.URL
	return reach(ctx, spec, rec, t.Scrape)
}
