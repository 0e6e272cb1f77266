package model

import (
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// SchemaVersion is the version of summary.json and of the verdict block, in their
// schema_version: 3 since resources' levels and capacities are numbers, not integers (a scraped
// resource keeps its fractions: Exhausted.Capacity/MaxInUse, Queue.Peak), 2 since the headline
// and the claims' sources (1: the files before, which had none). A change that removes or
// retypes a field raises it; docs/summary.schema.json and docs/verdict.schema.json describe the
// current one.
const SchemaVersion = 3

// Summary is everything the report computed for one run folder. It is what summary.json holds;
// fields tagged json:"-" are kept for the plots and report.md only.
type Summary struct {
	// SchemaVersion is SchemaVersion: the version of summary.json's shape (docs/summary.schema.json).
	SchemaVersion int    `json:"schema_version"`
	Scenario      string `json:"scenario"`
	RunID         string `json:"run_id"`
	Description   string `json:"description,omitempty"`
	Command       string `json:"command,omitempty"`
	Partial       bool   `json:"partial"`
	// Valid is false when any configuration's manifest is invalid or the folder is not what the
	// runner wrote; Invalid then says why and no claim gets a verdict. An interruption alone
	// does not make a run invalid (see NotReached, Phase.Reached).
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// Missing lists the configurations the run folder names (or holds raw results of) that have
	// no data to analyse: never started, or killed before their manifest was written.
	Missing []string `json:"missing,omitempty"`
	// NotReached says, for a partial run (interrupted, or cut off by a kill), which of the
	// Missing configurations it never got to or lost, and why ("split: missing: no folder ...").
	// They do not make the run invalid: it is judged as far as it got, and a claim about one of
	// them is not measurable.
	NotReached []string `json:"not_reached,omitempty"`
	// BucketS is the width of the Timeline buckets in seconds.
	BucketS float64 `json:"bucket_s"`
	// LatencyBinsMS are the edges of the timeline's latency histogram bins (Bucket.SuccessHist).
	LatencyBinsMS []float64 `json:"latency_bins_ms"`
	// Roles are the roles the scenario declared (its roles: block, recorded as roles.json),
	// empty when it declared none.
	Roles          Roles           `json:"roles"`
	Configurations []Configuration `json:"configurations"`
	// Aggregates holds, per configuration name, the mean and 95% CI of each figure across its
	// repetitions and its spread (min, median, max); one entry even with a single repetition.
	Aggregates []Aggregate `json:"aggregates"`
	// Headline answers the run's question first: the unaffected endpoint's success rate and
	// p99 of successes per fault phase and layout, with intervals (package headline).
	Headline []Headline `json:"headline"`
	// Verdict holds the scenario's claims (claims.json) judged with 95% intervals, and the
	// run's outcome for scripts.
	Verdict VerdictBlock `json:"verdict"`
	// MemberStats says, for a run with endpoint groups, that summary.json leaves out the members'
	// own attacks, pools and statistics (see output.JSON's MemberStats); empty otherwise.
	MemberStats string `json:"member_stats,omitempty"`

	// Dir is the run folder the Summary was read from.
	Dir string `json:"-"`
}

// Configuration is one configuration folder (one repetition of one pool layout).
type Configuration struct {
	// Name is the folder name ("shared", "split-r2").
	Name string `json:"name"`
	// Config is the configuration's name without the repetition suffix (Manifest.Configuration).
	Config     string   `json:"config"`
	Repetition int      `json:"repetition"`
	Mode       string   `json:"mode"`
	Fault      string   `json:"fault"` // fault types of the time line, "+"-joined, or "none"
	Valid      bool     `json:"valid"`
	Invalid    []string `json:"invalid,omitempty"`
	Partial    bool     `json:"partial"`
	Seed       int64    `json:"seed"`
	// ClientTimeoutMS is the service's client timeout of every dependency call.
	ClientTimeoutMS float64 `json:"client_timeout_ms"`
	// LagLimitMS is the send-lag p99 the load generator held this run to (manifests before the
	// limit was recorded: 0, meaning the 1 ms default).
	LagLimitMS float64 `json:"lag_limit_ms"`
	// Load is where the load generator ran: "inprocess" (inside the runner) or "process" (its
	// own child process); empty for folders from before it was recorded (in-process).
	Load string `json:"load,omitempty"`
	// MachineSteal is the largest share of one CPU's time the hypervisor took while the load
	// ran (manifest load.machine_steal); nil where it was not measured.
	MachineSteal *float64 `json:"machine_steal,omitempty"`
	// Target says what the system under test was ("the built-in service", "command node
	// server.js ...", "url http://..."); Outcomes how its responses were classed; TargetProblems
	// what went wrong with it while it ran (from the manifest).
	Target         string        `json:"target,omitempty"`
	Outcomes       string        `json:"outcomes,omitempty"`
	TargetProblems []string      `json:"target_problems,omitempty"`
	Pools          []PoolInfo    `json:"pools"`
	Endpoints      []EndpointRun `json:"endpoints"`
	Phases         []Phase       `json:"phases"`
	// Timeline holds per endpoint path one Bucket per BucketS seconds of the time line.
	Timeline map[string][]Bucket `json:"timeline"`
	// Outside counts results whose send offset lies in no phase.
	Outside int `json:"outside,omitempty"`
	// InterruptedAtS is, for a configuration cut short (Partial), when it stopped: seconds from
	// the attack start to the manifest's end; null otherwise.
	InterruptedAtS *float64 `json:"interrupted_at_s,omitempty"`
	// EndpointGroups and Memory: see groups.go (many endpoints; process memory).
	EndpointGroups []EndpointGroup `json:"endpoint_groups,omitempty"`
	Memory         *Memory         `json:"memory,omitempty"`

	// Resources are the configuration's resource samples (resources.csv; grouped resources
	// merged, see package ingest), Manifest its manifest as read.
	Resources []rundir.ResourceSample `json:"-"`
	Manifest  *rundir.Manifest        `json:"-"`
	// Dependencies are the dependencies' answers timed on their side (dependencies.csv; nil in
	// folders written before it, or when nothing was metered).
	Dependencies []rundir.DependencySample `json:"-"`
	// Blame returns what the report attributes one failed request of endpoint path in phase i
	// to (a resource name, "dependency:D", "target:<detail>" or "unexplained"; see package
	// attribution), and "" for a success; nil until the attribution has run.
	Blame func(i int, path string, r Record) string `json:"-"`
	// Requests holds, for the endpoints a claim measures, every request sorted by send time,
	// and Kinds the outcomes their Key indexes (the verdict engine resamples them).
	Requests map[string][]Record `json:"-"`
	Kinds    []Kind              `json:"-"`
}

// PoolInfo describes one pool of a configuration.
type PoolInfo struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Size         int      `json:"size"`
	Queue        int      `json:"queue"`
	MaxWaitMS    float64  `json:"max_wait_ms"`
	Dependencies []string `json:"dependencies"`
	// Goroutines is the goroutines the pool owns as its kind declares (a workers pool's
	// workers), 0 for one whose calls run on their callers'.
	Goroutines int `json:"goroutines,omitempty"`
}

// EndpointRun is one endpoint's attack and the load generator's check of itself.
type EndpointRun struct {
	Path      string   `json:"path"`
	Calls     []string `json:"calls"`
	Rate      float64  `json:"rate"`
	Arrivals  string   `json:"arrivals"`
	TimeoutMS float64  `json:"timeout_ms"`
	Scheduled uint64   `json:"scheduled"`
	Sent      uint64   `json:"sent"`
	Dropped   uint64   `json:"dropped"`
	LagP99MS  float64  `json:"lag_p99_ms"`
	LagMaxMS  float64  `json:"lag_max_ms"`
}

// Phase is one span of the time line with the statistics of its requests.
type Phase struct {
	Name   string  `json:"name"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// Reached is false for a phase an interrupted run never got to (its statistics are empty
	// and its Sentence says so); CutShort is true for the phase the interruption fell in.
	Reached  bool `json:"reached"`
	CutShort bool `json:"cut_short,omitempty"`
	// Faults are the manifest's faults: amounts resolved, measured switch offsets, and a
	// description (faults.Fault's JSON).
	Faults []faults.Fault `json:"faults,omitempty"`
	// Endpoints maps each endpoint path to the statistics of the requests sent in the phase.
	Endpoints map[string]*Stats `json:"endpoints"`
	// Exhausted lists every bounded resource (capacity > 0) seen in the phase, saturated first.
	Exhausted []Exhausted `json:"exhausted"`
	// Queues lists the waiting rooms without a count limit (queue:<name> of capacity 0) that
	// held anyone in the phase, judged by their growth and the wait they imposed.
	Queues []Queue `json:"queues,omitempty"`
	// Dependencies is each metered dependency's account of the phase, from its side.
	Dependencies []DependencyAccount `json:"dependencies,omitempty"`
	// Waits says, per endpoint, how long its successes spent inside the target beyond their
	// dependencies' answers, and what they waited for.
	Waits []Wait `json:"waits,omitempty"`
	// Cause is the resource that explains the largest share of the phase's failures, nil when
	// nothing failed.
	Cause *Cause `json:"cause"`
	// Sentence says in one sentence what ran out and what it explains.
	Sentence string `json:"sentence"`
	// Limits has, for each pool whose limit moves (an adaptive pool), how its limit settled
	// after the switch that starts the phase; nil for the first phase and without such pools.
	Limits []LimitFigure `json:"limits,omitempty"`

	// Start and End are the phase's span on the time line (StartS and EndS exactly), and
	// FaultStart when its first fault was applied (Start without a fault, or when the fault
	// was applied outside the phase).
	Start      time.Duration `json:"-"`
	End        time.Duration `json:"-"`
	FaultStart time.Duration `json:"-"`
}

// Latency is a latency distribution summary in milliseconds (zero when Count is 0).
type Latency struct {
	Count  int     `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Errors counts failures by type. Rejected counts every rejection; RejectedRefused and
// RejectedWaited split it by outcome.RejectionKind: turned away at once, or after waiting for a
// slot until the wait's bound (the two always add up to Rejected).
type Errors struct {
	Timeout         int `json:"timeout"`
	Rejected        int `json:"rejected"`
	RejectedRefused int `json:"rejected_refused"`
	RejectedWaited  int `json:"rejected_waited"`
	Upstream        int `json:"upstream"`
	Connection      int `json:"connection"`
	Other           int `json:"other"`
}

// Total returns the number of failures counted.
func (e Errors) Total() int { return e.Timeout + e.Rejected + e.Upstream + e.Connection + e.Other }

// Stats are the statistics of one slice of requests (configuration x phase x endpoint).
type Stats struct {
	Requests    int     `json:"requests"`
	Successes   int     `json:"successes"`
	SuccessRate float64 `json:"success_rate"`
	ErrorRate   float64 `json:"error_rate"`
	// P50MS .. MeanMS are over the successes (0 without any), as the claim metrics of the same
	// names are: a failure that returns at once is not fast service.
	P50MS  float64 `json:"p50_ms"`
	P90MS  float64 `json:"p90_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	MaxMS  float64 `json:"max_ms"`
	MeanMS float64 `json:"mean_ms"`
	// Success, Failure and Rejected are the latency of successes, of failures, and of the
	// failures that were rejections.
	Success  Latency `json:"success_latency"`
	Failure  Latency `json:"failure_latency"`
	Rejected Latency `json:"rejected_latency"`
	Errors   Errors  `json:"errors"`
	// Classes counts every request by its full class ("ok", "rejected:full", ...).
	Classes map[string]int `json:"classes"`
	// ThroughputRPS is successes per second of phase time.
	ThroughputRPS float64 `json:"throughput_rps"`
	// FirstFailureS and FirstRejectionS are the send offsets, in seconds from the phase start,
	// of the first failed and the first rejected request (null when none).
	FirstFailureS   *float64 `json:"first_failure_s"`
	FirstRejectionS *float64 `json:"first_rejection_s"`

	// Curve is the percentile curve of the successes' latency (the plots').
	Curve []CurvePoint `json:"-"`
}

// CurvePoint is one point of a latency percentile curve.
type CurvePoint struct {
	Percentile float64 `json:"percentile"`
	MS         float64 `json:"ms"`
}

// Bucket is one time bucket of one endpoint: the requests sent in [TS, TS+WidthS). Buckets are
// BucketS wide except where a phase boundary cuts one short (see timeline.go).
type Bucket struct {
	TS          float64 `json:"t_s"`     // bucket start, seconds since the attack start
	WidthS      float64 `json:"width_s"` // bucket width, seconds
	Requests    int     `json:"requests"`
	Successes   int     `json:"successes"`
	SuccessRate float64 `json:"success_rate"`
	ErrorRate   float64 `json:"error_rate"`
	// P50MS, P99MS and MaxMS are over every request, successes and failures alike.
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	MaxMS  float64 `json:"max_ms"`
	Errors Errors  `json:"errors"`
	// SuccessP50MS and SuccessP99MS are the latency of the successes alone (0 without any), so
	// fast failures cannot lower them; FailureP50MS and FailureP99MS that of the failures.
	SuccessP50MS float64 `json:"success_p50_ms"`
	SuccessP99MS float64 `json:"success_p99_ms"`
	FailureP50MS float64 `json:"failure_p50_ms"`
	FailureP99MS float64 `json:"failure_p99_ms"`
	// ThroughputRPS is successes, SentRPS requests sent, per second of the bucket.
	ThroughputRPS float64 `json:"throughput_rps"`
	SentRPS       float64 `json:"sent_rps"`
	// LagCount requests of the bucket carried their scheduled send offset (X-Loadgen-Scheduled);
	// LagP50MS and LagMaxMS are the median and the largest of their send lag: actual send offset
	// minus scheduled, on the attack's own clock (the manifest's start plus the endpoint's start
	// skew). (A bucket's p99 would be its maximum below 100 requests: the run's p99, which the
	// validity rule bounds, is EndpointRun.LagP99MS.)
	LagCount int     `json:"lag_count"`
	LagP50MS float64 `json:"lag_p50_ms"`
	LagMaxMS float64 `json:"lag_max_ms"`
	// SuccessHist and FailureHist count the successes' and the failures' latencies in the bins
	// of Summary.LatencyBinsMS (log-scaled, 10 per decade from 0.1 ms to 100 s).
	SuccessHist Hist `json:"success_hist"`
	FailureHist Hist `json:"failure_hist"`
}

// Exhausted is one bounded resource's account over a phase.
type Exhausted struct {
	Resource string `json:"resource"`
	// Capacity and MaxInUse are whole counts for the built-in service's resources, and keep a
	// scraped resource's fractions (outcome.Resource).
	Capacity float64 `json:"capacity"`
	MaxInUse float64 `json:"max_in_use"`
	// Exact is true when the figures are exact times from the run's sampling intervals (the
	// interval columns of resources.csv), false when they are shares of point samples (a run
	// folder written before those columns).
	Exact bool `json:"exact"`
	// MeanInUse is the time-weighted mean level over the phase, and AtCapacityS the seconds at
	// capacity in it (exact runs only).
	MeanInUse   float64 `json:"mean_in_use,omitempty"`
	AtCapacityS float64 `json:"at_capacity_s,omitempty"`
	// Saturated is true when the resource reached capacity in the phase (exact), or was at
	// capacity in at least one sample of it.
	Saturated bool `json:"saturated"`
	// SaturatedShare is the share of the phase spent at capacity (exact), or the share of its
	// samples at capacity.
	SaturatedShare float64 `json:"saturated_share"`
	// FirstSaturatedS is when the resource first reached capacity, seconds after the phase start
	// (null if never); AfterFaultS the same relative to the fault's start (null without a fault).
	FirstSaturatedS *float64 `json:"first_saturated_s"`
	AfterFaultS     *float64 `json:"first_saturated_after_fault_s"`
	// RanOut is true when the resource ran out: at capacity for at least one sampling period
	// (0.1 s) of the phase, and at capacity with demand waiting for it (its waiting room,
	// queue:<name>, held someone) or refused (its rejection counter grew, or a rejection was
	// charged to it) in some interval; DemandS is the time at capacity in those intervals (exact
	// runs), or the share of such samples times the phase's length. At capacity with nobody
	// waiting or refused is FullButSufficient: it never decides a sentence on its own.
	RanOut            bool    `json:"ran_out"`
	DemandS           float64 `json:"demand_s"`
	FullButSufficient bool    `json:"full_but_sufficient,omitempty"`
	// Rejected is the growth of the resource's cumulative rejection counter during the phase.
	Rejected uint64 `json:"rejected"`
	// Failures is the number of failed requests of the phase attributed to the resource.
	Failures int `json:"failures"`
}

// Queue is a waiting room without a count limit over a phase: how far it grew, the wait it
// imposed on the calls it held (read from the requests it serves: their time inside the target
// beyond their dependency's answer, and the rejections after waiting), and the bound that wait
// is judged against: a pool's max wait, or the client timeout.
type Queue struct {
	Resource string  `json:"resource"`
	Peak     float64 `json:"peak"`
	WaitMS   float64 `json:"wait_ms"`
	BoundMS  float64 `json:"bound_ms"`
	// BoundFrom says where the bound comes from ("max_wait of pool shared", "the client timeout").
	BoundFrom string `json:"bound_from"`
	// ReachedBound is true when the waits reached 95% of the bound: the queue ran out.
	ReachedBound bool `json:"reached_bound"`
}

// DependencyAccount is one dependency's answers over a phase, measured on its side (see
// outcome.Answers): counts, answer-time quantiles read from the merged histogram (within 4.4%),
// and whether it answered in time: nothing Late, cut, refused or closed.
type DependencyAccount struct {
	Dependency string  `json:"dependency"`
	Arrived    int     `json:"arrived"`
	Answered   int     `json:"answered"`
	P50MS      float64 `json:"p50_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
	// Late counts the calls it made wait about the client timeout or longer: answers longer
	// than it, and calls the target gave up on after 90% of it or more.
	Late      int     `json:"late"`
	Errors    int     `json:"errors"`
	Abandoned int     `json:"abandoned"`
	Cut       int     `json:"cut"`
	Refused   int     `json:"refused"`
	ClosedS   float64 `json:"closed_s"`
	InTime    bool    `json:"in_time"`
}

// Wait is the time an endpoint's successes spent inside the target in a phase beyond their
// dependencies' answers (median success latency minus the sum of its dependencies' median
// answer times), and what they waited for: a resource that ran out or held waiters, or "" when
// nothing measured explains it.
type Wait struct {
	Endpoint string  `json:"endpoint"`
	InsideMS float64 `json:"inside_ms"`
	Resource string  `json:"resource,omitempty"`
	Failures int     `json:"failures"`
}

// Cause is the resource that explains the largest share of a phase's failures.
type Cause struct {
	Resource string `json:"resource"`
	// Failures attributed to the resource, over all endpoints, and their share of all failures.
	Failures int     `json:"failures"`
	Share    float64 `json:"share"`
	// Endpoint is the endpoint with the most failures attributed to the resource, and
	// EndpointShare the share of that endpoint's failures it explains.
	Endpoint      string  `json:"endpoint"`
	EndpointShare float64 `json:"endpoint_share"`
	// EndpointFailures is that endpoint's failures in the phase, and EndpointByType its failures
	// attributed to the resource, by type (rejected, timeout, ...).
	EndpointFailures int            `json:"endpoint_failures"`
	EndpointByType   map[string]int `json:"endpoint_by_type"`
	// Kind says what those failures were ("rejections", "timeouts", ...).
	Kind string `json:"kind"`
	// ByEndpoint holds the attribution of every endpoint's failures: resource -> count.
	ByEndpoint map[string]map[string]int `json:"by_endpoint"`
}

// Figure is one figure across repetitions: its mean with the 95% confidence half-width (t
// distribution; null with fewer than two repetitions), and its spread: the smallest, median and
// largest value of a repetition.
type Figure struct {
	Mean   float64  `json:"mean"`
	CI95   *float64 `json:"ci95"`
	N      int      `json:"n"`
	Min    float64  `json:"min"`
	Median float64  `json:"median"`
	Max    float64  `json:"max"`
}

// Aggregate is one configuration's figures across repetitions.
type Aggregate struct {
	Config      string           `json:"config"`
	Mode        string           `json:"mode"`
	Repetitions int              `json:"repetitions"`
	Phases      []AggregatePhase `json:"phases"`
}

// AggregatePhase holds per endpoint the figures of one phase: name -> Figure, names as in Stats
// ("p99_ms", "success_rate", ...).
type AggregatePhase struct {
	Name      string                       `json:"name"`
	Endpoints map[string]map[string]Figure `json:"endpoints"`
}

// Roles are the roles the scenario declared (claim.Roles), with the endpoints as lists so that
// grouped endpoints can be replaced by their group.
type Roles struct {
	Shared          string   `json:"shared,omitempty"`
	Split           string   `json:"split,omitempty"`
	FaultDependency string   `json:"fault_dependency,omitempty"`
	Affected        []string `json:"affected,omitempty"`
	Unaffected      []string `json:"unaffected,omitempty"`
	Baseline        string   `json:"baseline,omitempty"`
	LatencyPhase    string   `json:"latency_phase,omitempty"`
	ErrorPhase      string   `json:"error_phase,omitempty"`
	NormalLoad      []string `json:"normal_load,omitempty"`
}

// DefaultBucket is the width of the time buckets used for plots.
const DefaultBucket = time.Second

// LimitFigure is how an adaptive pool's limit behaved over one phase, from resources.csv's exact
// rows (each row's limit is its time-weighted mean over its interval): the limit just before
// the phase's switch, its range in the phase, the level it settled at (its mean over the phase's
// last quarter) and the seconds from the switch to the end of the last row more than a band
// (max(1 slot, 10%)) away from that level. SettleS is nil when a row of the last quarter is
// outside the band: the limit was still moving when the phase ended.
type LimitFigure struct {
	Resource string   `json:"resource"`
	Before   float64  `json:"before"`
	Min      float64  `json:"min"`
	Max      float64  `json:"max"`
	Final    float64  `json:"final"`
	Band     float64  `json:"band"`
	SettleS  *float64 `json:"settle_s"`
}
