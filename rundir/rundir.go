package rundir

import (
	"encoding/json"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/outcome"
)

// File and folder names inside a run folder.
const (
	RunFile = "run.json"
	// ScenarioFile is the scenario as run: resolved, with the command line's overrides applied;
	// `bulkhead run` on it repeats the run.
	ScenarioFile = "scenario.yaml"
	// ScenarioSourceFile is the scenario file as given, before overrides.
	ScenarioSourceFile = "scenario.source.yaml"
	// ClaimsFile holds the claims the run is judged by, as run (after command-line overrides).
	ClaimsFile = "claims.json"
	// RolesFile holds the roles the scenario declared (its roles: block), when it declared any.
	RolesFile    = "roles.json"
	ManifestFile = "manifest.json"
	// StartErrorFile says why nothing was measured in a configuration folder: its dependencies,
	// proxies, target or load generator could not be started (the error, naming the part and its
	// address), or the run was interrupted while it was starting.
	StartErrorFile = "start-error.txt"
	RawDir         = "raw"
	ResourcesFile  = "resources.csv"
	SummaryFile    = "summary.json"
	ReportFile     = "report.md"
	PlotsDir       = "plots"
	// TargetFilesDir holds, per configuration (TargetFilesDir/<configuration>/), copies of the
	// files its target named (a command's files:), recorded in run.json with the inputs: the
	// scenario as run starts the target from them (CopyInputs).
	TargetFilesDir = "target-files"
)

// ResourceCSVHeader is the header row of resources.csv: one row per resource per sample, so any
// number of pools and dependencies fits. t_s is seconds since the attack start (the time line's
// zero); capacity and in_use the capacity and the level at that instant; rejected is cumulative
// (empty: no count known, outcome.Resource.RejectedUnknown).
// The other columns are the exact figures of the sampling interval that ends at t_s
// (outcome.Resource): interval_s its length (0: a point sample, the other columns empty),
// mean_in_use the time-weighted mean level, max_in_use the highest level, at_capacity_s the
// seconds at capacity (at or above the capacity of each moment), first_at_capacity_s the seconds
// from the interval's start to the first instant at capacity (empty when none), mean_capacity
// the time-weighted mean capacity of a resource whose capacity moves (an adaptive pool's
// limit; empty when the capacity was fixed, which it then is). Folders written before these
// columns existed have only the first five, or the first ten; ReadResources reads all three.
var ResourceCSVHeader = []string{"t_s", "resource", "capacity", "in_use", "rejected",
	"interval_s", "mean_in_use", "max_in_use", "at_capacity_s", "first_at_capacity_s", "mean_capacity"}

// resourceCSVHeaderV1 is the header of resources.csv before the interval columns, V2 before
// mean_capacity.
var (
	resourceCSVHeaderV1 = ResourceCSVHeader[:5]
	resourceCSVHeaderV2 = ResourceCSVHeader[:10]
)

// Run describes a whole run folder.
type Run struct {
	Scenario       string    `json:"scenario"`
	RunID          string    `json:"run_id"`
	Description    string    `json:"description,omitempty"`
	Configurations []string  `json:"configurations"` // folder names, in run order
	Started        time.Time `json:"started"`
	Ended          time.Time `json:"ended"`
	Partial        bool      `json:"partial"` // interrupted: some configurations missing or cut short
	Command        string    `json:"command"` // how to reproduce
	// Overrides are the command line's changes to the scenario file (already applied in
	// ScenarioFile); nil when there were none.
	Overrides any `json:"overrides,omitempty"`
	// Parallel is how many configuration runs ran at the same time (1: one after another).
	Parallel int `json:"parallel"`
	// GCPercent is the garbage collector's GOGC percentage the run set for itself (a run with
	// many dependencies collects more often, see experiment's gc.go); absent: the process's own
	// setting (GOGC, default 100).
	GCPercent int `json:"gc_percent,omitempty"`
	// Load is where the load generators ran: LoadInProcess or LoadProcess ("" in older folders:
	// in-process).
	Load string `json:"load,omitempty"`
	// State is how far the run got: StateRunning from its start (a folder left so was cut off by
	// a kill), then StateComplete, StateInterrupted or StateFailed when it ended.
	State string `json:"state,omitempty"`
	// Error is why a failed run failed.
	Error string `json:"error,omitempty"`
	// PID and Host are the runner's: while it runs it holds the folder's lock (LockRun), which
	// is how a reader tells a run in progress from one cut off (InProgress).
	PID  int    `json:"pid,omitempty"`
	Host string `json:"host,omitempty"`
	// Files are the run folder's own inputs as the runner wrote them (scenario.yaml,
	// scenario.source.yaml, claims.json, roles.json), recorded before any configuration
	// started; VerifyRun checks them. Older folders have none.
	Files []FileRecord `json:"files,omitempty"`
	// ClaimIDs are the ids of the claims claims.json holds, in order; empty when the scenario
	// states none. A claims.json missing while ClaimIDs names claims is an integrity error, not a
	// run without claims.
	ClaimIDs []string `json:"claim_ids,omitempty"`
}

// States of a run (Run.State) and of a configuration's run (Manifest.State).
const (
	// StateRunning is written when the run or configuration starts: a folder still saying so
	// was cut off (SIGKILL, a second interrupt, a crash) before it could say how it ended.
	StateRunning = "running"
	// StateComplete: the time line ran to its end (the run may still be invalid).
	StateComplete = "complete"
	// StateInterrupted: stopped by an interrupt; what ran was written and closed.
	StateInterrupted = "interrupted"
	// StateFailed: stopped by an error (Run.Error, Manifest.Invalid say which).
	StateFailed = "failed"
)

// Manifest describes one configuration's run.
type Manifest struct {
	Scenario      string `json:"scenario"`
	Configuration string `json:"configuration"`
	Repetition    int    `json:"repetition"`
	Seed          int64  `json:"seed"`
	// Parallel is how many configuration runs (this one included) the runner ran at once.
	Parallel int       `json:"parallel"`
	Versions Versions  `json:"versions"`
	Host     string    `json:"host"`
	Started  time.Time `json:"started"` // wall clock of the attack start (t = 0)
	Ended    time.Time `json:"ended"`
	Partial  bool      `json:"partial"`
	// State is StateRunning from the moment the configuration's load starts until the manifest
	// is completed at its end (StateComplete, StateInterrupted or StateFailed). Older folders
	// have none.
	State         string        `json:"state,omitempty"`
	Valid         bool          `json:"valid"`
	Invalid       []string      `json:"invalid,omitempty"` // reasons the run is not valid
	ClientTimeout time.Duration `json:"client_timeout_ns"`
	// Service is the system under test's own configuration as it recorded it (for the built-in
	// service, its service.Config), kept for reproduction; the report reads Topology instead.
	Service json.RawMessage `json:"service,omitempty"`
	// Topology is the contract view of the system under test the report attributes from. Older
	// folders lack it; their Service decodes into a Topology.
	Topology *outcome.Topology `json:"topology,omitempty"`
	// Target says what the system under test was: the built-in service, a command the runner
	// started, or a URL already running, with the outcome mapping its responses were classed by
	// and what went wrong with it while running. Older folders lack it (the built-in service).
	Target    *Target        `json:"target,omitempty"`
	Phases    []Phase        `json:"phases"`
	Endpoints []Endpoint     `json:"endpoints"`
	Resolved  map[string]any `json:"resolved,omitempty"` // scenario values resolved at load time (e.g. "0.9x timeout" -> 450ms)
	Toxiproxy string         `json:"toxiproxy"`          // "embedded" or the external URL
	// LagLimit is the send-lag p99 above which the load generator marked the run invalid.
	LagLimit time.Duration `json:"lag_limit_ns"`
	// Load says where the load generator ran (nil in older folders: in the runner's process).
	Load *Load `json:"load,omitempty"`
	// Engine is the engine the configuration's parts ran on ("local", "kubernetes"; "" in older
	// folders: local).
	Engine string `json:"engine,omitempty"`
	// Meters say how each dependency's answers were timed into DependenciesFile (nil in older
	// folders, which have no such file).
	Meters []Meter `json:"meters,omitempty"`
	// Files are the configuration folder's data files (DataFile) as they were when its run
	// ended, recorded just before the manifest was completed; VerifyConfiguration checks them. A
	// manifest still saying StateRunning has none.
	Files []FileRecord `json:"files,omitempty"`
}

// Layouts of the load generator (Load.Layout, Run.Load).
const (
	// LoadInProcess: the load generator ran inside the runner's process.
	LoadInProcess = "inprocess"
	// LoadProcess: the load generator ran as a child process (`bulkhead attack`).
	LoadProcess = "process"
)

// Load is the manifest's account of the load generator's process.
type Load struct {
	Layout string `json:"layout"`
	// Command, PID, Spec and Logs (child process only): its command line and process id, its
	// spec file and its stdout and stderr logs, relative to the configuration folder.
	Command []string `json:"command,omitempty"`
	// Env (child process only) is what the runner added to the child's environment.
	Env  []string `json:"env,omitempty"`
	PID  int      `json:"pid,omitempty"`
	Spec string   `json:"spec,omitempty"`
	Logs []string `json:"logs,omitempty"`
	// Error is how the child process ended when it ended without its checks.
	Error string `json:"error,omitempty"`
	// PeakRSS (child process only) is the child's peak resident set size in bytes, which the
	// runner's own does not include (0: not known).
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
	// Steal is the largest share of one CPU's time the hypervisor took while the load ran
	// (steal time, 0 to 1), as the load generator measured it; nil where the system does not
	// account it, and in older folders. Late sends on a machine that lost CPU this way are the
	// machine's, and so are the service's latencies.
	Steal *float64 `json:"machine_steal,omitempty"`
}

// Target is the manifest's account of the system under test.
type Target struct {
	// Kind is the target's kind as registered in package target ("builtin", "command", "url",
	// "image").
	Kind string `json:"kind"`
	// Description says what the system under test was, in the report's words ("the built-in
	// service", "command `node server.js`, resources scraped from ..."); "" in older folders.
	Description string `json:"description,omitempty"`
	// Image is the container image an image target ran from; Command its entrypoint and args.
	Image   string   `json:"image,omitempty"`
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	Metrics string   `json:"metrics,omitempty"`
	// Outcomes is the mapping responses were classed by (nil: the built-in contract).
	Outcomes *outcome.Mapping `json:"outcomes,omitempty"`
	// Version is the output of the target's version command (target: version:), trimmed; ""
	// when it has none. The description ends with its first line.
	Version string `json:"version,omitempty"`
	// Listen is where each component listened: "service", "metrics", "proxy:NAME".
	Listen map[string]string `json:"listen,omitempty"`
	// Problems are what went wrong with the target while it ran (scrapes that failed, a command
	// that exited); the measured results are kept.
	Problems []string `json:"problems,omitempty"`
}

// Versions records what produced the run.
type Versions struct {
	Bulkhead  string `json:"bulkhead"`
	Go        string `json:"go"`
	Toxiproxy string `json:"toxiproxy"`
	Vegeta    string `json:"vegeta"`
}

// Phase is one span of the time line, offsets from the attack start.
type Phase struct {
	Name  string        `json:"name"`
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Faults are the phase's faults, amounts resolved, with the measured offsets at which each
	// switched (Fault.AppliedAt, RemovedAt).
	Faults []faults.Fault `json:"faults,omitempty"`
}

// Endpoint is one endpoint's attack and the load generator's check of itself.
type Endpoint struct {
	Path     string        `json:"path"`
	RawFile  string        `json:"raw_file"`   // relative to the configuration folder
	Rate     float64       `json:"rate"`       // requests per second
	Arrivals string        `json:"arrivals"`   // constant | poisson
	Timeout  time.Duration `json:"timeout_ns"` // the load generator's own timeout
	// Offset is how much earlier than its unshifted constant-rate schedule this stream sends, so
	// that streams do not send in the same instant; repetitions vary it (0 for Poisson arrivals).
	Offset time.Duration `json:"arrival_offset_ns"`
	// Drift, when > 0, is how long this stream takes to drift one whole interval ahead of the
	// first endpoint's (the scenario's load.drift): Rate is then the declared rate plus 1/Drift,
	// and Offset is where the drift starts.
	Drift time.Duration `json:"drift_ns,omitempty"`
	// Planned is how many sends the plan has within the whole time line (the pacer's hits in
	// it); 0 in older folders. No count below may exceed it.
	Planned uint64 `json:"planned,omitempty"`
	// Self-check.
	Scheduled uint64        `json:"scheduled"` // sends the pacer scheduled within the time line
	Sent      uint64        `json:"sent"`
	Dropped   uint64        `json:"dropped"`
	LagP50    time.Duration `json:"lag_p50_ns"`
	LagP99    time.Duration `json:"lag_p99_ns"`
	LagMax    time.Duration `json:"lag_max_ns"`
	// StartSkew is how long after t = 0 this endpoint's attack started its clock; send lag is
	// measured on that clock (actual send - (t0 + StartSkew + scheduled)).
	StartSkew time.Duration `json:"start_skew_ns"`
	// Shards, when the load was sent by several load generators (`bulkhead attack --segment
	// k/N`), is each one's part of this endpoint: RawFile above is then their exact merge, and
	// the lag figures above are the merged sends' against the common schedule (actual send -
	// (t0 + scheduled)), start skews and clock differences included. The endpoint is valid only
	// when every shard is. Nil for a load from one load generator.
	Shards []Shard `json:"shards,omitempty"`
}

// Shard is one load generator's part of an endpoint's load: its own raw file (kept beside the
// merged one), when it started and how far its clock was from the runner's, and its self-check.
type Shard struct {
	// Segment is "k/N": this load generator sent the hits g with g mod N == k.
	Segment string `json:"segment"`
	RawFile string `json:"raw_file"` // relative to the configuration folder
	// T0 is the common start it was given; StartSkew how long after it its attack started.
	T0        time.Time     `json:"t0"`
	StartSkew time.Duration `json:"start_skew_ns"`
	// StartSlack is how long before T0 it was ready to send (its clock measured and its
	// connections warm): the margin the start's lead left it; negative, it was late.
	StartSlack time.Duration `json:"start_slack_ns"`
	// ClockOffset is the runner's clock minus this load generator's, measured over HTTP round
	// trips before the start, to within ClockUncertainty; ClockKnown is false when it could not
	// be measured (the offsets are then 0).
	ClockKnown       bool          `json:"clock_known"`
	ClockOffset      time.Duration `json:"clock_offset_ns"`
	ClockUncertainty time.Duration `json:"clock_uncertainty_ns"`
	// Self-check, on its own clock (as Endpoint's for an unsharded load).
	Scheduled uint64        `json:"scheduled"`
	Sent      uint64        `json:"sent"`
	Dropped   uint64        `json:"dropped"`
	LagP50    time.Duration `json:"lag_p50_ns"`
	LagP99    time.Duration `json:"lag_p99_ns"`
	LagMax    time.Duration `json:"lag_max_ns"`
	Valid     bool          `json:"valid"`
	Invalid   []string      `json:"invalid,omitempty"`
	// Where it ran: "process <pid>" or "pod <namespace>/<name> on <node>".
	Where string `json:"where,omitempty"`
}
