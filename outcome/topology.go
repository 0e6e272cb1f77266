package outcome

import "time"

// Topology is what the report needs to know of the system under test to attribute failures to
// resources: its pools, which dependencies each endpoint calls, and the client timeout. The
// built-in service derives it from its configuration; another target declares it. Its JSON
// field names are the service configuration's, so a manifest's recorded service configuration
// decodes into a Topology too.
type Topology struct {
	// Mode is the pool layout: "shared", "split", or "none" (no pools).
	Mode          string         `json:"mode"`
	Pools         []TopologyPool `json:"pools"`
	Endpoints     []TopologyCall `json:"endpoints"`
	ClientTimeout time.Duration  `json:"client_timeout"`
}

// Pool layouts of Topology.Mode.
const (
	ModeShared = "shared"
	ModeSplit  = "split"
	ModeNone   = "none"
)

// TopologyPool is one pool: its kind ("semaphore", "workers", "gradient2", ...), its slots
// (Size: the most calls it runs at once) and waiting room, the dependencies whose calls take
// its slots, and the goroutines it owns.
type TopologyPool struct {
	Name          string        `json:"name"`
	Kind          string        `json:"kind"`
	Size          int           `json:"size"`
	QueueCapacity int           `json:"queue_capacity"`
	MaxWait       time.Duration `json:"max_wait"`
	Dependencies  []string      `json:"dependencies"`
	// Goroutines is the number of goroutines the pool owns for as long as it lives (a workers
	// pool's workers; 0 for a pool whose calls run on their callers' goroutines), as its kind
	// declares. Topologies recorded before the field existed leave it 0.
	Goroutines int `json:"goroutines,omitempty"`
}

// TopologyCall says which dependencies an endpoint calls.
type TopologyCall struct {
	Path  string   `json:"path"`
	Calls []string `json:"calls"`
}
