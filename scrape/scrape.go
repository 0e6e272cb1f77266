package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Defaults of a Scraper.
const (
	// DefaultTimeout bounds one scrape (request and body) when Config.Timeout is 0.
	DefaultTimeout = 2 * time.Second
	// MaxBody is the largest metrics page read; a longer one is an error, not a truncation.
	MaxBody = 16 << 20
)

// ErrNoResources is returned (wrapped) when a page parses but no mapping finds its metrics: the
// target exposes none of the names the mappings know.
var ErrNoResources = errors.New("no resource metrics found")

// Config is what a scenario says about scraping one target. The zero Config is valid: the
// built-in mappings only, DefaultTimeout.
type Config struct {
	// Timeout bounds one scrape; 0 means DefaultTimeout.
	Timeout time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
	// Resources are the scenario's own mappings, applied after Builtin.
	Resources []Mapping `yaml:"resources,omitempty" json:"resources,omitempty"`
}

// Scraper reads one target's metrics endpoint and turns it into resources. Build it with New; it
// is safe for concurrent use.
type Scraper struct {
	url      string
	timeout  time.Duration
	client   *http.Client
	mappings []Mapping
	maxBody  int64 // MaxBody; smaller in tests
}

// New returns a Scraper of the metrics page at url with cfg's mappings after the built-in ones.
// It validates cfg (errors name fields under "resources[i]") and the URL; it does not connect.
// A nil client means a client of its own (no keep-alive reuse across targets, no proxy).
func New(url string, cfg Config, client *http.Client) (*Scraper, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("scrape: metrics address %q is not an http(s) URL", url)
	}
	if err := Validate("resources", cfg.Resources); err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("scrape %s: timeout %v is negative", url, cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if client == nil {
		client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}
	}
	return &Scraper{url: url, timeout: cfg.Timeout, client: client,
		mappings: append(Builtin(), cfg.Resources...), maxBody: MaxBody}, nil
}

// URL returns the metrics address the scraper reads.
func (s *Scraper) URL() string { return s.url }

// Resources fetches the metrics page once and returns its resources (see Parse). It blocks for
// at most the scrape timeout, less if ctx ends first. Every error names the address: the
// endpoint refused or vanished, answered a status other than 200, sent more than MaxBody bytes,
// or a page that does not parse or lacks a required metric.
func (s *Scraper) Resources(ctx context.Context) ([]outcome.Resource, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	// Ask for the text format: the one expfmt's TextParser reads.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) //nolint:errcheck // drained for reuse only
		return nil, fmt.Errorf("scrape %s: status %d, want 200", s.url, resp.StatusCode)
	}
	body := &limited{r: resp.Body, n: s.maxBody}
	rs, err := Parse(body, s.mappings)
	if body.over {
		return nil, fmt.Errorf("scrape %s: page longer than %d bytes", s.url, s.maxBody)
	}
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	return rs, nil
}

// limited reads at most n bytes of r and records whether r had more.
type limited struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.over = true
			return 0, errors.New("page too long")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// Parse reads one metrics page in the Prometheus text format (expfmt) and applies mappings in
// order. It returns the resources in mapping order, and within a mapping by name. It fails on a
// page that does not parse, a required mapping whose InUse/Free metric is absent, a resource
// whose capacity series is absent, a negative value, a series of a histogram or summary, two
// series that name one resource (within a mapping, or a required mapping naming a resource a
// mapping before it named: the error names both series), and a page where no mapping found
// anything (ErrNoResources). An optional mapping (every built-in one) naming a resource already
// read is skipped: the built-in mappings read one resource from several exporters' names.
func Parse(r io.Reader, mappings []Mapping) ([]outcome.Resource, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	var out []outcome.Resource
	from := map[string]string{} // resource name -> the series it was read from
	for i, m := range mappings {
		rs, srcs, err := apply(fams, m)
		if err != nil {
			return nil, fmt.Errorf("mapping %d (%s): %w", i, m.Resource, err)
		}
		for k, res := range rs {
			if prev, dup := from[res.Name]; dup {
				if m.Optional {
					continue
				}
				return nil, fmt.Errorf("mapping %d (%s): resource %s is named twice: by %s and by %s", i, m.Resource, res.Name, prev, srcs[k])
			}
			from[res.Name] = srcs[k]
			out = append(out, res)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoResources
	}
	return out, nil
}

// sample is the value of one resource's series and the series it was read from.
type sample struct {
	v   float64
	src string
}

// apply evaluates one mapping over the parsed families: the resources, and per resource the
// series its level was read from.
func apply(fams map[string]*dto.MetricFamily, m Mapping) ([]outcome.Resource, []string, error) {
	anchor, free := m.InUse, false
	if m.Free.Metric != "" {
		anchor, free = m.Free, true
	}
	if _, ok := fams[anchor.Metric]; !ok {
		if m.Optional {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("metric %s is missing", anchor.Metric)
	}
	used, err := values(fams, anchor, m.Label, m.scale(), true)
	if err != nil {
		return nil, nil, err
	}
	if len(used) == 0 {
		if m.Optional {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("metric %s has no series matching %s", anchor.Metric, anchor)
	}
	var caps map[string]sample
	if m.Capacity.Metric != "" {
		if _, ok := fams[m.Capacity.Metric]; !ok {
			return nil, nil, fmt.Errorf("metric %s is missing (the capacity of %s)", m.Capacity.Metric, anchor.Metric)
		}
		if caps, err = values(fams, m.Capacity, m.Label, m.scale(), false); err != nil {
			return nil, nil, err
		}
	}
	var rejected map[string]sample
	if m.Rejected.Metric != "" {
		if _, ok := fams[m.Rejected.Metric]; ok {
			if rejected, err = values(fams, m.Rejected, m.Label, 1, false); err != nil {
				return nil, nil, err
			}
		}
	}
	keys := make([]string, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rs := make([]outcome.Resource, 0, len(keys))
	srcs := make([]string, 0, len(keys))
	for _, k := range keys {
		name := m.Resource
		if m.Label != "" {
			name = outcome.ResourceName(m.Resource, k)
		}
		capacity := float64(m.CapacityValue)
		if caps != nil {
			c, ok := caps[k]
			if !ok {
				return nil, nil, fmt.Errorf("%s: metric %s has no series with %s", name, m.Capacity.Metric, labelKey(m.Label, k))
			}
			capacity = c.v
			if math.IsNaN(capacity) || math.IsInf(capacity, 1) {
				capacity = 0 // an exporter's "no limit"
			}
		}
		if capacity == 0 && m.OmitZeroCapacity {
			continue
		}
		level := used[k].v
		if math.IsNaN(level) {
			continue // the level is not known in this sample
		}
		if math.IsInf(level, 0) {
			return nil, nil, fmt.Errorf("%s: %s reads %v, want a level", name, used[k].src, level)
		}
		if free {
			if capacity == 0 {
				return nil, nil, fmt.Errorf("%s: %s reads free units of no limit: a free series needs a capacity", name, used[k].src)
			}
			if level > capacity {
				return nil, nil, fmt.Errorf("%s: %s reads %v free of a capacity of %v", name, anchor.Metric, level, capacity)
			}
			level = capacity - level
		}
		res := outcome.Resource{Name: name, Capacity: capacity, InUse: level, RejectedUnknown: true}
		if r, ok := rejected[k]; ok && !math.IsNaN(r.v) {
			res.Rejected, res.RejectedUnknown = uint64(math.Round(r.v)), false
		}
		rs = append(rs, res)
		srcs = append(srcs, used[k].src)
	}
	return rs, srcs, nil
}

func (m Mapping) scale() float64 {
	if m.Scale == 0 {
		return 1
	}
	return m.Scale
}

// labelKey describes the labels a key was filled from, for errors: `name="A"`, or the filled
// template.
func labelKey(label, key string) string {
	if names, _ := templateLabels(label); len(names) > 0 {
		return fmt.Sprintf("labels %s filling %q", label, key)
	}
	return fmt.Sprintf("%s=%q", label, key)
}

// keyOf returns the resource key a series' labels give for label (a label name or a template),
// and false when the series lacks a label it needs.
func keyOf(mt *dto.Metric, label string) (string, bool) {
	names, _ := templateLabels(label)
	if len(names) == 0 {
		return labelValue(mt, label)
	}
	out := label
	for _, n := range names {
		v, ok := labelValue(mt, n)
		if !ok {
			return "", false
		}
		out = strings.Replace(out, "{"+n+"}", v, 1)
	}
	return out, true
}

// values reads the samples of s's metric that match s.Match, by the key label gives (all under
// "" when label is ""), each times scale. Samples without the labels are skipped when a label
// is wanted. Samples of one key are summed, except when anchor is true and a label is set: two
// series naming one resource are then an error naming both. NaN and +Inf are returned as they
// are (the caller decides what they mean); a negative value is an error.
func values(fams map[string]*dto.MetricFamily, s Series, label string, scale float64, anchor bool) (map[string]sample, error) {
	fam := fams[s.Metric]
	out := map[string]sample{}
	for _, mt := range fam.GetMetric() {
		if !matches(mt, s.Match) {
			continue
		}
		key := ""
		if label != "" {
			v, ok := keyOf(mt, label)
			if !ok {
				continue
			}
			key = v
		}
		var x float64
		switch {
		case mt.Gauge != nil:
			x = mt.Gauge.GetValue()
		case mt.Counter != nil:
			x = mt.Counter.GetValue()
		case mt.Untyped != nil:
			x = mt.Untyped.GetValue()
		default:
			return nil, fmt.Errorf("metric %s is a %s, not a gauge or counter", s.Metric, strings.ToLower(fam.GetType().String()))
		}
		src := s.Metric + labelText(mt)
		if x < 0 || math.IsInf(x, -1) || x*scale > 1<<53 && !math.IsInf(x, 1) {
			return nil, fmt.Errorf("metric %s has value %v, want a level or count >= 0", src, x)
		}
		prev, seen := out[key]
		if seen && anchor && label != "" {
			return nil, fmt.Errorf("series %s and %s both name resource %s; add the label that tells them apart to the mapping's label template", prev.src, src, key)
		}
		if seen {
			x = prev.v + x*scale
			src = prev.src
		} else {
			x *= scale
		}
		out[key] = sample{v: x, src: src}
	}
	return out, nil
}

func matches(mt *dto.Metric, match map[string]string) bool {
	for k, want := range match {
		v, _ := labelValue(mt, k)
		if !slices.Contains(strings.Split(want, "|"), v) {
			return false
		}
	}
	return true
}

func labelValue(mt *dto.Metric, name string) (string, bool) {
	for _, lp := range mt.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue(), true
		}
	}
	return "", false
}

func labelText(mt *dto.Metric) string {
	if len(mt.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, 0, len(mt.GetLabel()))
	for _, lp := range mt.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
