package scrape

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"go.yaml.in/yaml/v3"
)

// A Spring Boot service with one semaphore bulkhead and one thread-pool bulkhead, as Micrometer's
// Prometheus registry writes them (extra tags such as application are allowed).
const r4jPage = `# HELP resilience4j_bulkhead_available_concurrent_calls The number of available permissions
# TYPE resilience4j_bulkhead_available_concurrent_calls gauge
resilience4j_bulkhead_available_concurrent_calls{application="shop",name="inventory"} 3.0
# HELP resilience4j_bulkhead_max_allowed_concurrent_calls The maximum number of available permissions
# TYPE resilience4j_bulkhead_max_allowed_concurrent_calls gauge
resilience4j_bulkhead_max_allowed_concurrent_calls{application="shop",name="inventory"} 10.0
# TYPE resilience4j_bulkhead_active_thread_count gauge
resilience4j_bulkhead_active_thread_count{application="shop",name="payments"} 4.0
# TYPE resilience4j_bulkhead_max_thread_pool_size gauge
resilience4j_bulkhead_max_thread_pool_size{application="shop",name="payments"} 4.0
# TYPE resilience4j_bulkhead_queue_depth gauge
resilience4j_bulkhead_queue_depth{application="shop",name="payments"} 7.0
# TYPE resilience4j_bulkhead_queue_capacity gauge
resilience4j_bulkhead_queue_capacity{application="shop",name="payments"} 8.0
# TYPE resilience4j_circuitbreaker_state gauge
resilience4j_circuitbreaker_state{name="payments",state="closed"} 0.0
resilience4j_circuitbreaker_state{name="payments",state="open"} 1.0
resilience4j_circuitbreaker_state{name="payments",state="half_open"} 0.0
# TYPE go_goroutines gauge
go_goroutines 42
`

func TestParse(t *testing.T) {
	hikari := Mapping{Resource: "pool", Label: "pool",
		InUse: Series{Metric: "hikaricp_connections_active"}, Capacity: Series{Metric: "hikaricp_connections_max"}}
	tests := []struct {
		name     string
		page     string
		mappings []Mapping
		want     []outcome.Resource
		wantErr  string
	}{
		{name: "resilience4j semaphore, thread pool, queue, breaker", page: r4jPage, mappings: Builtin(),
			want: []outcome.Resource{
				{Name: "pool:inventory", Capacity: 10, InUse: 7, RejectedUnknown: true},
				{Name: "pool:payments", Capacity: 4, InUse: 4, RejectedUnknown: true},
				{Name: "queue:payments", Capacity: 8, InUse: 7, RejectedUnknown: true},
				{Name: "breaker:payments", Capacity: 1, InUse: 1, RejectedUnknown: true},
				{Name: "goroutines", InUse: 42, RejectedUnknown: true},
			}},
		{name: "this project's own names with rejections", mappings: Builtin(), page: `
resilience4j_bulkhead_available_concurrent_calls{name="A"} 0
resilience4j_bulkhead_max_allowed_concurrent_calls{name="A"} 5
resilience4j_bulkhead_queue_depth{name="A"} 0
resilience4j_bulkhead_queue_capacity{name="A"} 0
bulkhead_rejected_calls_total{name="A",reason="full"} 3
bulkhead_rejected_calls_total{name="A",reason="wait-timeout"} 2
bulkhead_rejected_calls_total{name="A",reason="queue-full"} 9
bulkhead_dependency_calls_in_flight{dependency="A"} 5
bulkhead_dependency_calls_in_flight_max{dependency="A"} 5
bulkhead_dependency_connections_open{dependency="A"} 6
bulkhead_process_inbound_connections 12
bulkhead_process_inbound_connections_max 0
bulkhead_process_outbound_connections 6
bulkhead_process_outbound_connections_max 100
bulkhead_process_outbound_connections_rejected_total 4
`, want: []outcome.Resource{
			{Name: "pool:A", Capacity: 5, InUse: 5, Rejected: 5},
			{Name: "conns:A", InUse: 6, RejectedUnknown: true},
			{Name: "calls:A", Capacity: 5, InUse: 5, RejectedUnknown: true},
			{Name: "inbound-conns", InUse: 12, RejectedUnknown: true},
			{Name: "outbound-conns", Capacity: 100, InUse: 6, Rejected: 4},
		}},
		{name: "user mapping by label", mappings: []Mapping{hikari}, page: `
hikaricp_connections_active{pool="main"} 9
hikaricp_connections_active{pool="reports"} 1
hikaricp_connections_max{pool="main"} 10
hikaricp_connections_max{pool="reports"} 2
`, want: []outcome.Resource{{Name: "pool:main", Capacity: 10, InUse: 9, RejectedUnknown: true}, {Name: "pool:reports", Capacity: 2, InUse: 1, RejectedUnknown: true}}},
		{name: "user mapping, whole name, free with a constant, match", mappings: []Mapping{
			{Resource: "pool:db", Free: Series{Metric: "db_idle", Match: map[string]string{"pool": "main"}}, CapacityValue: 20}}, page: `
db_idle{pool="main"} 5
db_idle{pool="other"} 100
`, want: []outcome.Resource{{Name: "pool:db", Capacity: 20, InUse: 15, RejectedUnknown: true}}},
		{name: "untyped and counter values", mappings: []Mapping{
			{Resource: "calls:x", InUse: Series{Metric: "x_inflight"}, Rejected: Series{Metric: "x_rejected_total"}}}, page: `
# TYPE x_rejected_total counter
x_rejected_total 7
x_inflight 3
`, want: []outcome.Resource{{Name: "calls:x", InUse: 3, Rejected: 7}}},
		{name: "two mappings naming one resource is an error naming both series", mappings: []Mapping{
			{Resource: "pool:a", InUse: Series{Metric: "one"}}, {Resource: "pool:a", InUse: Series{Metric: "two"}}},
			page: "one 1\ntwo 2\n", wantErr: "resource pool:a is named twice: by one and by two"},
		{name: "a counter absent from the page is unknown, not 0", mappings: []Mapping{
			{Resource: "calls:x", InUse: Series{Metric: "x_inflight"}, Rejected: Series{Metric: "x_rejected_total"}}},
			page: "x_inflight 3\n", want: []outcome.Resource{{Name: "calls:x", InUse: 3, RejectedUnknown: true}}},
		{name: "NaN or +Inf capacity is no limit; a NaN level leaves the resource out", mappings: []Mapping{
			{Resource: "queue", Label: "{proxy}/{server}", InUse: Series{Metric: "haproxy_server_current_queue"}, Capacity: Series{Metric: "haproxy_server_queue_limit"}}},
			page: `haproxy_server_current_queue{proxy="A",server="a1"} 17
haproxy_server_current_queue{proxy="B",server="b1"} 2
haproxy_server_current_queue{proxy="C",server="c1"} NaN
haproxy_server_queue_limit{proxy="A",server="a1"} NaN
haproxy_server_queue_limit{proxy="B",server="b1"} +Inf
haproxy_server_queue_limit{proxy="C",server="c1"} 4
`, want: []outcome.Resource{{Name: "queue:A/a1", InUse: 17, RejectedUnknown: true}, {Name: "queue:B/b1", InUse: 2, RejectedUnknown: true}}},
		{name: "a template missing a label that tells two series apart", mappings: []Mapping{
			{Resource: "pool", Label: "{proxy}", InUse: Series{Metric: "haproxy_server_current_sessions"}}},
			page: `haproxy_server_current_sessions{proxy="A",server="a1"} 1
haproxy_server_current_sessions{proxy="A",server="a2"} 2
`, wantErr: `series haproxy_server_current_sessions{proxy="A",server="a1"} and haproxy_server_current_sessions{proxy="A",server="a2"} both name resource A`},
		{name: "a gauge in seconds scaled to milliseconds keeps its fraction", mappings: []Mapping{
			{Resource: "eventloop:main", InUse: Series{Metric: "nodejs_eventloop_lag_seconds"}, CapacityValue: 50, Scale: 1000}},
			page: "nodejs_eventloop_lag_seconds 0.0125\n", want: []outcome.Resource{{Name: "eventloop:main", Capacity: 50, InUse: 12.5, RejectedUnknown: true}}},
		// Issue 20 item 7: fractions are kept as the exporter wrote them, without a scale.
		{name: "a delay in seconds against a bound in seconds, unscaled", mappings: []Mapping{
			{Resource: "eventloop:main", InUse: Series{Metric: "nodejs_eventloop_lag_seconds"}, CapacityValue: 0.05}},
			page: "nodejs_eventloop_lag_seconds 0.0125\n", want: []outcome.Resource{{Name: "eventloop:main", Capacity: 0.05, InUse: 0.0125, RejectedUnknown: true}}},
		{name: "a CPU share of a fractional core limit", mappings: []Mapping{
			{Resource: "cpu", Label: "container", InUse: Series{Metric: "cpu_cores_used"}, Capacity: Series{Metric: "cpu_cores_limit"}}},
			page: "cpu_cores_used{container=\"api\"} 0.375\ncpu_cores_limit{container=\"api\"} 1.5\n",
			want: []outcome.Resource{{Name: "cpu:api", Capacity: 1.5, InUse: 0.375, RejectedUnknown: true}}},
		{name: "free units as a fraction of a fractional capacity", mappings: []Mapping{
			{Resource: "pool:db", Free: Series{Metric: "db_free"}, CapacityValue: 2.5}},
			page: "db_free 0.75\n", want: []outcome.Resource{{Name: "pool:db", Capacity: 2.5, InUse: 1.75, RejectedUnknown: true}}},

		{name: "garbage", page: "this is not { a metrics page\n", mappings: Builtin(), wantErr: "parse metrics"},
		{name: "html", page: "<html><body>Not Found</body></html>\n", mappings: Builtin(), wantErr: "parse metrics"},
		{name: "empty page", page: "", mappings: Builtin(), wantErr: "no resource metrics found"},
		{name: "only unrelated metrics", page: "process_cpu_seconds_total 3\n", mappings: Builtin(), wantErr: "no resource metrics found"},
		{name: "required metric missing", page: "go_goroutines 3\n", mappings: []Mapping{hikari},
			wantErr: "mapping 0 (pool): metric hikaricp_connections_active is missing"},
		{name: "capacity metric missing", page: "hikaricp_connections_active{pool=\"main\"} 1\n", mappings: []Mapping{hikari},
			wantErr: "metric hikaricp_connections_max is missing"},
		{name: "capacity series missing for a label value", mappings: []Mapping{hikari}, page: `
hikaricp_connections_active{pool="main"} 1
hikaricp_connections_max{pool="other"} 2
`, wantErr: `pool:main: metric hikaricp_connections_max has no series with pool="main"`},
		{name: "negative value", page: `resilience4j_bulkhead_available_concurrent_calls{name="A"} -1
resilience4j_bulkhead_max_allowed_concurrent_calls{name="A"} 5
`, mappings: Builtin(), wantErr: `has value -1, want a level or count >= 0`},
		{name: "more free than capacity", page: `resilience4j_bulkhead_available_concurrent_calls{name="A"} 7
resilience4j_bulkhead_max_allowed_concurrent_calls{name="A"} 5
`, mappings: Builtin(), wantErr: `pool:A: resilience4j_bulkhead_available_concurrent_calls reads 7 free of a capacity of 5`},
		{name: "a NaN level only", page: "go_goroutines NaN\n", mappings: Builtin(), wantErr: "no resource metrics found"},
		{name: "histogram referenced", mappings: []Mapping{{Resource: "calls:x", InUse: Series{Metric: "lat"}}}, page: `# TYPE lat histogram
lat_bucket{le="1"} 1
lat_bucket{le="+Inf"} 1
lat_sum 0.5
lat_count 1
`, wantErr: "metric lat is a histogram, not a gauge or counter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.page), tt.mappings)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v; want one containing %q (resources %+v)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		m    Mapping
		want string // "" means valid
	}{
		{name: "kind with label", m: Mapping{Resource: "pool", Label: "name", InUse: Series{Metric: "x"}}},
		{name: "whole name", m: Mapping{Resource: "queue:jobs", InUse: Series{Metric: "x"}, CapacityValue: 3}},
		{name: "plain name", m: Mapping{Resource: "goroutines", InUse: Series{Metric: "x"}}},
		{name: "unknown kind with label", m: Mapping{Resource: "threads", Label: "name", InUse: Series{Metric: "x"}},
			want: `r[0].resource: "threads" is not a resource kind`},
		{name: "unknown kind", m: Mapping{Resource: "threads:x", InUse: Series{Metric: "x"}}, want: `r[0].resource: kind "threads"`},
		{name: "neither name form", m: Mapping{Resource: "db", InUse: Series{Metric: "x"}}, want: `r[0].resource: "db" is neither`},
		{name: "no resource", m: Mapping{InUse: Series{Metric: "x"}}, want: `r[0].resource: missing`},
		{name: "no series", m: Mapping{Resource: "pool:x"}, want: `r[0].in_use: missing`},
		{name: "both series", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, Free: Series{Metric: "b"}, CapacityValue: 1}, want: `r[0].free: set together`},
		{name: "free without capacity", m: Mapping{Resource: "pool:x", Free: Series{Metric: "b"}}, want: `r[0].capacity: missing`},
		{name: "two capacities", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, Capacity: Series{Metric: "c"}, CapacityValue: 2}, want: `r[0].capacity_value: set together`},
		{name: "negative capacity", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, CapacityValue: -2}, want: `r[0].capacity_value: -2 is negative`},
		{name: "infinite capacity", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, CapacityValue: math.Inf(1)}, want: `r[0].capacity_value: +Inf is not a finite number`},
		{name: "bad metric name", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a-b"}}, want: `r[0].in_use.metric: "a-b" is not a metric name`},
		{name: "bad label", m: Mapping{Resource: "pool", Label: "a-b", InUse: Series{Metric: "a"}}, want: `r[0].label: "a-b"`},
		{name: "label template", m: Mapping{Resource: "queue", Label: "{proxy}/{server}", InUse: Series{Metric: "a"}}},
		{name: "template with a bad label", m: Mapping{Resource: "queue", Label: "{proxy}/{a-b}", InUse: Series{Metric: "a"}}, want: `r[0].label: template "{proxy}/{a-b}": "a-b" is not a label name`},
		{name: "template unclosed", m: Mapping{Resource: "queue", Label: "{proxy", InUse: Series{Metric: "a"}}, want: `r[0].label: template "{proxy": a { without its }`},
		{name: "negative scale", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, Scale: -1}, want: `r[0].scale: -1 is negative`},
		{name: "match without metric", m: Mapping{Resource: "pool:x", InUse: Series{Metric: "a"}, Rejected: Series{Match: map[string]string{"a": "b"}}}, want: `r[0].rejected.metric: missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate("r", []Mapping{tt.m})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate = %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v; want an error containing %q", err, tt.want)
			}
		})
	}
	if err := Validate("builtin", Builtin()); err != nil {
		t.Errorf("the built-in mappings are invalid: %v", err)
	}
}

// A scenario writes its mappings in YAML; a series is a metric name or {metric, match}.
func TestConfigYAML(t *testing.T) {
	const doc = `
timeout: 500ms
resources:
  - resource: pool
    label: pool
    in_use: hikaricp_connections_active
    capacity: hikaricp_connections_max
  - resource: pool:db
    free: {metric: db_idle, match: {pool: main}}
    capacity_value: 20
`
	var cfg Config
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Config{Timeout: 500 * time.Millisecond, Resources: []Mapping{
		{Resource: "pool", Label: "pool", InUse: Series{Metric: "hikaricp_connections_active"}, Capacity: Series{Metric: "hikaricp_connections_max"}},
		{Resource: "pool:db", Free: Series{Metric: "db_idle", Match: map[string]string{"pool": "main"}}, CapacityValue: 20},
	}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("decoded %+v\nwant %+v", cfg, want)
	}
	if _, err := New("http://127.0.0.1:1/metrics", cfg, nil); err != nil {
		t.Fatal(err)
	}
}

func TestScraperErrors(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(r4jPage)) })
	mux.HandleFunc("/garbage", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{\"json\": true}\n")) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	const maxBody = 1 << 16 // the test's limit: MaxBody is too much to send under -race
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		line := []byte("# " + strings.Repeat("x", 1<<10) + "\n")
		for n := 0; n <= maxBody; n += len(line) {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	gone := httptest.NewServer(mux)
	goneURL := gone.URL + "/metrics"
	gone.Close() // an endpoint that disappeared: its port now refuses

	tests := []struct {
		name    string
		url     string
		timeout time.Duration
		want    []string
	}{
		{name: "ok", url: srv.URL + "/metrics"},
		{name: "garbage", url: srv.URL + "/garbage", want: []string{"scrape " + srv.URL + "/garbage: parse metrics"}},
		{name: "404", url: srv.URL + "/missing", want: []string{"scrape " + srv.URL + "/missing: status 404, want 200"}},
		{name: "gone", url: goneURL, want: []string{"scrape " + goneURL + ":", "connection refused"}},
		{name: "timeout", url: srv.URL + "/slow", timeout: 50 * time.Millisecond, want: []string{"scrape " + srv.URL + "/slow:", "deadline exceeded"}},
		{name: "too long", url: srv.URL + "/huge", timeout: time.Hour, want: []string{"scrape " + srv.URL + "/huge: page longer than 65536 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = time.Minute // no wall-clock bound where the case is not about one
			}
			s, err := New(tt.url, Config{Timeout: timeout}, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.maxBody = maxBody
			rs, err := s.Resources(context.Background())
			if len(tt.want) == 0 {
				if err != nil || len(rs) == 0 {
					t.Fatalf("Resources = %v, %v; want resources", rs, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resources = %v; want an error", rs)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := New("127.0.0.1:9090/metrics", Config{}, nil); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("New without scheme: %v", err)
	}
	_, err := New("http://h/metrics", Config{Resources: []Mapping{{Resource: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "scrape http://h/metrics: resources[0].resource") {
		t.Errorf("New with a bad mapping: %v", err)
	}
}

// A cancelled context ends the scrape with the context's error, still naming the address.
func TestScraperContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	s, _ := New(srv.URL, Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Resources(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("Resources(cancelled) = %v; want context.Canceled naming %s", err, srv.URL)
	}
}

// Whatever the page, Parse returns resources or an error and never panics; what it returns is
// well formed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{r4jPage, "", "go_goroutines 1\n", "x{a=\"b\"} 1e300\n", "# TYPE x histogram\nx_bucket{le=\"1\"} 1\n",
		`resilience4j_bulkhead_available_concurrent_calls{name="A"} 7` + "\n" + `resilience4j_bulkhead_max_allowed_concurrent_calls{name="A"} 5` + "\n"} {
		f.Add(s)
	}
	user := []Mapping{{Resource: "pool", Label: "p", Free: Series{Metric: "x"}, CapacityValue: 3, Optional: true}}
	ms := append(Builtin(), user...)
	f.Fuzz(func(t *testing.T, page string) {
		rs, err := Parse(strings.NewReader(page), ms)
		if err != nil {
			return
		}
		for _, r := range rs {
			if r.Name == "" || r.Capacity < 0 || r.InUse < 0 {
				t.Errorf("resource %+v", r)
			}
		}
	})
}
