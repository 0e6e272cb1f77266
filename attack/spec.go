package attack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/outcome"
)

// SpecFile is the spec's file name in a configuration's folder; StdoutFile and StderrFile are
// the child's logs beside it (stdout is the event stream).
const (
	SpecFile   = "attack.json"
	StdoutFile = "attack.stdout.jsonl"
	StderrFile = "attack.stderr.log"
)

// DefaultProgressEvery is the period of progress events when the spec sets none.
const DefaultProgressEvery = 500 * time.Millisecond

// Spec is everything the child needs to run a configuration's load as the runner would.
// Durations are integer nanoseconds in JSON.
type Spec struct {
	// Configuration names the configuration run (its folder), for errors and logs.
	Configuration string `json:"configuration"`
	// Duration is the time line: every hit due within it is sent.
	Duration time.Duration `json:"duration_ns"`
	// Load is the load generator's settings (timeout, lag limit, workers, connections).
	Load loadgen.Settings `json:"load"`
	// Outcomes classes the results of a target that does not speak the built-in contract; nil
	// means the built-in contract (outcome.Classify).
	Outcomes *outcome.Mapping `json:"outcomes,omitempty"`
	// ProgressEvery is the period of progress events; 0 means DefaultProgressEvery.
	ProgressEvery time.Duration `json:"progress_every_ns,omitempty"`
	Attacks       []AttackSpec  `json:"attacks"`
	// T0 is the common start: the wall-clock instant every shard of the load takes as the time
	// line's zero, its connections warmed before it (loadgen.WithStartAt). The zero T0 starts the
	// load as soon as it is ready.
	T0 time.Time `json:"t0,omitzero"`
	// Segment is the part of every attack's schedule this load generator sends (loadgen.Stripe:
	// hit g goes to shard g mod Count); the zero Segment sends all of it. `bulkhead attack
	// --segment k/N` sets it, so that one spec serves every shard.
	Segment loadgen.Shard `json:"segment,omitzero"`
	// ClockURL, when set, is a clock reference (ClockHandler) the load generator measures its
	// own clock's offset against before it starts (MeasureClock), reported in the started event:
	// the shards of one load are on one schedule only as far as their clocks agree.
	ClockURL string `json:"clock_url,omitempty"`
}

// Files are the names, in a configuration's folder, of one shard's spec, event log and stderr
// log: SpecFile, StdoutFile and StderrFile for an unsharded load, with the shard's ShardName in
// them otherwise.
func Files(s loadgen.Shard) (spec, stdout, stderr string) {
	return ShardName(SpecFile, s), ShardName(StdoutFile, s), ShardName(StderrFile, s)
}

// ShardName returns the name shard s gives a file of the load (a raw file, its spec, its logs):
// name itself when s is not sharded, otherwise name with ".shard-k-of-N" before its first
// extension ("a.jsonl" -> "a.shard-1-of-2.jsonl").
func ShardName(name string, s loadgen.Shard) string {
	if !s.Sharded() {
		return name
	}
	dir, base := filepath.Split(name)
	stem, ext, _ := strings.Cut(base, ".")
	if ext != "" {
		ext = "." + ext
	}
	return dir + fmt.Sprintf("%s.shard-%d-of-%d%s", stem, s.Index, s.Count, ext)
}

// AttackSpec is one endpoint's attack.
type AttackSpec struct {
	Name  string            `json:"name"`
	URL   string            `json:"url"`
	Pacer loadgen.PacerSpec `json:"pacer"`
	// RawFile is where the results go, relative to the spec file's folder (or absolute). It must
	// not exist yet.
	RawFile string `json:"raw_file"`
}

// NewAttackSpec describes a loadgen attack whose results go to rawFile.
func NewAttackSpec(name, url string, p loadgen.Pacer, rawFile string) (AttackSpec, error) {
	ps, err := loadgen.DescribePacer(p)
	if err != nil {
		return AttackSpec{}, fmt.Errorf("attack %s: %w", name, err)
	}
	return AttackSpec{Name: name, URL: url, Pacer: ps, RawFile: rawFile}, nil
}

// ReadSpec reads and checks the spec file at path. An error names the file and the field (its
// JSON path) and says why.
func ReadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read attack spec: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// Validate checks the spec without starting anything; an error names the field by its JSON
// path ("attacks[1].pacer: kind ...").
func (s *Spec) Validate() error {
	if s.Duration <= 0 {
		return fmt.Errorf("duration_ns: %v must be positive", s.Duration)
	}
	if s.ProgressEvery < 0 {
		return fmt.Errorf("progress_every_ns: %v must not be negative", s.ProgressEvery)
	}
	if len(s.Attacks) == 0 {
		return errors.New("attacks: none")
	}
	if err := s.Segment.Validate(); err != nil {
		return fmt.Errorf("segment: %w", err)
	}
	if s.ClockURL != "" {
		if u, err := url.Parse(s.ClockURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("clock_url: %q is not an absolute http(s) URL", s.ClockURL)
		}
	}
	if s.Outcomes != nil {
		if err := s.Outcomes.Validate("outcomes"); err != nil {
			return err
		}
	}
	for i, a := range s.Attacks {
		at := fmt.Sprintf("attacks[%d]", i)
		if a.Name == "" {
			return fmt.Errorf("%s.name: empty", at)
		}
		if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s.url: %q is not an absolute http(s) URL", at, a.URL)
		}
		if a.RawFile == "" {
			return fmt.Errorf("%s.raw_file: empty", at)
		}
		if _, err := a.Pacer.Pacer(); err != nil {
			return fmt.Errorf("%s.pacer: %w", at, err)
		}
	}
	return nil
}

// attacks builds the loadgen attacks, their results going to outs (one per attack, in order).
func (s *Spec) attacks(outs []*os.File) ([]loadgen.Attack, error) {
	out := make([]loadgen.Attack, len(s.Attacks))
	for i, a := range s.Attacks {
		p, err := a.Pacer.Pacer()
		if err != nil {
			return nil, fmt.Errorf("attacks[%d].pacer: %w", i, err)
		}
		if p, err = loadgen.Stripe(p, s.Segment); err != nil {
			return nil, fmt.Errorf("segment: %w", err)
		}
		out[i] = loadgen.Attack{Name: a.Name, URL: a.URL, Pacer: p, Out: outs[i]}
	}
	return out, nil
}

// opts are the loadgen options of the spec.
func (s *Spec) opts() []loadgen.Opt {
	o := s.Load.Opts()
	if !s.T0.IsZero() {
		o = append(o, loadgen.WithStartAt(s.T0))
	}
	if s.Outcomes != nil {
		o = append(o, loadgen.WithClassifier(s.Outcomes.Classify))
	}
	return o
}

// rawPath resolves attack a's raw file, as this shard names it, against the spec's folder.
func (s *Spec) rawPath(specDir string, a AttackSpec) string {
	return rawPath(specDir, ShardName(a.RawFile, s.Segment))
}

// rawPath resolves a raw file against the spec's folder.
func rawPath(specDir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(specDir, p)
}

// EventSchemaVersion is the version of the events' JSON, in the started event: 2 since their
// progress and checks have snake_case keys (1 wrote loadgen's Go field names, "LagP99").
const EventSchemaVersion = 2

// Event is one line the child writes to its stdout. Every key is snake_case.
type Event struct {
	// Type is EventStarted, EventProgress or EventDone.
	Type string `json:"type"`
	// SchemaVersion (started) is EventSchemaVersion.
	SchemaVersion int `json:"schema_version,omitempty"`
	// T0 (started) is the time line's zero, wall clock, as loadgen.Run.T0; PID the child's.
	T0  time.Time `json:"t0,omitzero"`
	PID int       `json:"pid,omitempty"`
	// Segment (started) is the shard this load generator sends (zero: all); Clock its clock's
	// offset from the spec's clock reference, when it has one (nil otherwise).
	Segment loadgen.Shard `json:"segment,omitzero"`
	Clock   *ClockOffset  `json:"clock,omitempty"`
	// Slack (started, with a common T0 in the spec) is how long before T0 the load generator was
	// ready to send (clock measured, connections warm: loadgen.Run.Ready); negative when it was
	// ready only after T0.
	Slack time.Duration `json:"slack_ns,omitempty"`
	// Progress (progress) is loadgen.Run.Progress.
	Progress []loadgen.Progress `json:"progress,omitempty"`
	// Checks and Pooled (done) are loadgen.Run.Wait's and Pooled's; Error joins the failures to
	// write or close the results ("" when none).
	Checks []loadgen.Check `json:"checks,omitempty"`
	Pooled *loadgen.Check  `json:"pooled,omitempty"`
	Error  string          `json:"error,omitempty"`
	// PeakRSS (done) is the child's peak resident set size in bytes (0 where the system does
	// not say): the runner's own peak does not include it.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
	// Attack (results, results_end) is the index of the attack whose raw file Data continues:
	// gzip-compressed bytes, base64 in JSON. Bytes and SHA256 (results_end) are the raw file's
	// size and hex SHA-256, which the runner checks what it gathered against.
	Attack int    `json:"attack,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Event types.
const (
	EventStarted  = "started"
	EventProgress = "progress"
	EventDone     = "done"
	// EventResults carries a piece of one raw file, EventResultsEnd closes it (StreamResults).
	EventResults    = "results"
	EventResultsEnd = "results_end"
)
