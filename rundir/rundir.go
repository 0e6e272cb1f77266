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
)

// ResourceCSVHeader is the header row of resources.csv: one row per resource per sample, so any
// number of pools and dependencies fits. t_s is seconds since the attack start (the time line's
// zero); in_use the level at that instant; rejected is cumulative. The other columns are the
// exact figures of the sampling interval that ends at t_s (outcome.Resource): interval_s its
// length (0: a point sample, the other columns empty), mean_in_use the time-weighted mean level,
// max_in_use the highest level, at_capacity_s the seconds at capacity, first_at_capacity_s the
// seconds from the interval's start to the first instant at capacity (empty when none). Folders
// written before these columns existed have only the first five; ReadResources reads both.
var ResourceCSVHeader = []string{"t_s", "resource", "capacity", "in_use", "rejected",
	"interval_s", "mean_in_use", "max_in_use", "at_capacity_s", "first_at_capacity_s"}

// resourceCSVHeaderV1 is the header of resources.csv before the interval columns.
var resourceCSVHeaderV1 = ResourceCSVHeader[:5]

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

// Target kinds (Target.Kind).
const (
	TargetBuiltIn = "builtin"
	TargetCommand = "command"
	TargetURL     = "url"
)

// Target is the manifest's account of the system under test.
type Target struct {
	Kind    string   `json:"kind"`
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	Metrics string   `json:"metrics,omitempty"`
	// Outcomes is the mapping responses were classed by (nil: the built-in contract).
	Outcomes *outcome.Mapping `json:"outcomes,omitempty"`
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
}
