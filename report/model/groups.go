package model

// EndpointGroup is a set of endpoints reported together, with their attacks and pools summed
// up: what the settings and validity tables show in one row instead of one per member.
type EndpointGroup struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
	// Dependencies is the number of dependencies the members call.
	Dependencies int `json:"dependencies"`
	// RateMin and RateMax bound the members' rates (requests per second each); Arrivals lists
	// their arrival processes; TimeoutMS is the largest load generator timeout.
	RateMin   float64  `json:"rate_min"`
	RateMax   float64  `json:"rate_max"`
	Arrivals  []string `json:"arrivals"`
	TimeoutMS float64  `json:"timeout_ms"`
	// Scheduled, Sent and Dropped are the members' sums.
	Scheduled uint64 `json:"scheduled"`
	Sent      uint64 `json:"sent"`
	Dropped   uint64 `json:"dropped"`
	// LagP99MS is the largest send lag p99 of a member, LagWorst that member; LagMaxMS the
	// largest send lag of any member.
	LagP99MS float64 `json:"lag_p99_ms_max"`
	LagWorst string  `json:"lag_worst"`
	LagMaxMS float64 `json:"lag_max_ms"`
	// InvalidMembers are the members the configuration's invalid reasons name; their reasons are
	// folded into one reason naming the group (the manifest keeps every reason).
	InvalidMembers []string `json:"invalid_members,omitempty"`
	// Pools summarises the pools that hold only the members' dependencies.
	Pools GroupPools `json:"pools"`
}

// GroupPools summarises a group's pools.
type GroupPools struct {
	Count     int      `json:"count"`
	Kinds     []string `json:"kinds,omitempty"`
	SizeMin   int      `json:"size_min"`
	SizeMax   int      `json:"size_max"`
	QueueMin  int      `json:"queue_min"`
	QueueMax  int      `json:"queue_max"`
	MaxWaitMS float64  `json:"max_wait_ms_max"`
}

// Memory is one configuration's process memory and goroutines over its time line, from the
// resource samples (process-wide: the service, the embedded Toxiproxy, the fake dependencies and
// the load generator share the process).
type Memory struct {
	Samples         int     `json:"samples"`
	GoroutinesMean  float64 `json:"goroutines_mean"`
	GoroutinesMax   int     `json:"goroutines_max"`
	HeapBytesMean   float64 `json:"heap_bytes_mean"`
	HeapBytesMax    int     `json:"heap_bytes_max"`
	StackBytesMean  float64 `json:"stack_bytes_mean"`
	StackBytesMax   int     `json:"stack_bytes_max"`
	WorkerPools     int     `json:"worker_pools"`
	WorkerPoolSlots int     `json:"worker_goroutines"` // goroutines the pools own (a workers pool: its size)
	SemaphoreSlots  int     `json:"semaphore_permits"` // sum of the sizes of pools that own none (semaphores, adaptive limits)
}
