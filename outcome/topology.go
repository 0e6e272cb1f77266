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

// TopologyPool is one pool: its kind ("semaphore" or "workers"), its slots and waiting room, and
// the dependencies whose calls take its slots.
type TopologyPool struct {
	Name          string        `json:"name"`
	Kind          string        `json:"kind"`
	Size          int           `json:"size"`
	QueueCapacity int           `json:"queue_capacity"`
	MaxWait       time.Duration `json:"max_wait"`
	Dependencies  []string      `json:"dependencies"`
}

// TopologyCall says which dependencies an endpoint calls.
type TopologyCall struct {
	Path  string   `json:"path"`
	Calls []string `json:"calls"`
}
