package faults_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/dependency"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/service"
)

// bench is a run's path for one fault, shrunk: the fake dependency A, an embedded Toxiproxy proxy
// in front of it behind the runner's meter (proxy.Metered, as every run has it, so each fault's
// outcome here is also the proof that the meter changes none), and the service with one endpoint /a that calls A through the proxy (no pool,
// so only the fault decides the outcome). Each fault type's test applies its fault here and
// reads the outcome mix the service answers.
type bench struct {
	t      *testing.T
	dep    *dependency.Server
	inj    proxy.Injector
	listen string // the proxy's address
	url    string // the service's /a
	client *http.Client
}

// newBench starts the bench with the service's client timeout timeout; cleanup stops it all.
func newBench(t *testing.T, timeout time.Duration) *bench {
	t.Helper()
	b := &bench{t: t, dep: dependency.New(dependency.Config{Name: "A"}), inj: proxy.NewMetered(proxy.NewEmbedded())}
	depURL, err := b.dep.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.dep.Close() })
	t.Cleanup(func() { _ = b.inj.Close(context.Background()) }) // before the dependency closes
	u, err := url.Parse(depURL)
	if err != nil {
		t.Fatal(err)
	}
	if b.listen, err = b.inj.AddProxy(context.Background(), "A", u.Host); err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{
		Mode:          service.ModeNone,
		Dependencies:  []service.DependencyConfig{{Name: "A", URL: "http://" + b.listen}},
		Endpoints:     []service.EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
		ClientTimeout: timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	base, err := svc.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	b.url, b.client = base+"/a", &http.Client{Transport: tr, Timeout: 10 * timeout}
	return b
}

// apply installs f on A as the runner does: the proxy's part through the injector, an error
// status on the dependency itself.
func (b *bench) apply(f faults.Fault) {
	b.t.Helper()
	f.Dependency = "A"
	if problems := f.Check(); problems != nil {
		b.t.Fatalf("fault %s does not check: %v", f, problems)
	}
	e := f.Effect()
	if e.Status != 0 {
		b.dep.SetFailing(e.Status)
	}
	if err := b.inj.Apply(context.Background(), "A", e); err != nil {
		b.t.Fatalf("Apply(%s): %v", f, err)
	}
}

// mix sends n requests to /a one after the other and counts their outcomes.
func (b *bench) mix(n int) Mix {
	b.t.Helper()
	m := Mix{}
	for range n {
		m[b.get()]++
	}
	return m
}

// get sends one request to /a and returns its outcome: the service's X-Bulkhead-Outcome, with
// X-Bulkhead-Reason after a slash when there is one ("ok", "timeout", "upstream/reset").
func (b *bench) get() string {
	b.t.Helper()
	resp, err := b.client.Get(b.url)
	if err != nil {
		b.t.Fatalf("GET %s: %v (the service must answer every request)", b.url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	out := resp.Header.Get(outcome.HeaderOutcome)
	if r := resp.Header.Get(outcome.HeaderReason); r != "" {
		out += "/" + r
	}
	return out
}

// Mix counts requests by outcome.
type Mix map[string]int

// String writes the mix in a fixed order: "ok 7, upstream/reset 3".
func (m Mix) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// total is the number of requests counted.
func (m Mix) total() int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// only reports whether every request had the outcome want.
func (m Mix) only(want string) bool { return len(m) == 1 && m[want] > 0 }

// problemFields returns the keys of p's problems, sorted, for tables of Check.
func problemFields(p faults.Params) []string {
	var out []string
	for _, pr := range p.Check() {
		out = append(out, pr.Field)
	}
	slices.Sort(out)
	return out
}

// checkTable runs a table of parameters and the keys Check must complain about (nil: valid).
func checkTable(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := problemFields(c.params); !slices.Equal(got, c.want) {
				t.Errorf("Check() problems at %v, want %v (%v)", got, c.want, c.params.Check())
			}
		})
	}
}

type checkCase struct {
	name   string
	params faults.Params
	want   []string
}

// toxicOf returns the toxic f installs, failing the test if it installs none.
func toxicOf(t *testing.T, f faults.Fault) faults.Toxic {
	t.Helper()
	e := f.Effect()
	if e.Toxic == nil {
		t.Fatalf("%s installs no toxic", f)
	}
	return *e.Toxic
}
