package scenarios_test

import (
	"fmt"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

func ExampleParse() {
	_, err := scenarios.Parse("scenarios/x.yaml", []byte(`name: x
timeout: 500ms
dependencies: [{name: A}, {name: B}]
endpoints: [{path: /a, calls: [A]}]
load: {rate: 50/s, arivals: poisson}
configurations:
  - name: split
    pools: [{name: A, size: 5, dependencies: [A]}]
phases:
  - name: slow
    duration: 15s
    faults:
      - {dependency: C, type: latency, latency: 0.9x timeout}
`))
	fmt.Println(err)
	// Output:
	// scenarios/x.yaml:5: load.arivals: unknown field "arivals" (known: rate, arrivals, timeout, drift, lag_limit)
	// scenarios/x.yaml:8: configurations[0].pools: dependency "B" is in no pool; each dependency belongs to exactly one pool
	// scenarios/x.yaml:13: phases[0].faults[0].dependency: unknown dependency "C" (known: A, B)
}

func ExampleOpen() {
	s, err := scenarios.Open("hypothesis") // a built-in, from any directory
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Path, s.Duration(), s.Phases[3].Faults[0].Params.(*faults.Latency).Latency)
	fmt.Println(s.Resolved["phases[3].faults[0].latency"])
	// Output:
	// builtin:hypothesis 1m10s 450ms
	// 0.9x timeout = 450ms (timeout 500ms)
}
