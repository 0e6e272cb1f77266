// Command bulkhead runs fault-injection experiments that compare one shared pool with
// per-dependency bulkheads. See the README for the two commands that matter most, and docs/ for
// the rest.
package main

import (
	"os"

	"github.com/bulkheadlab/bulkhead/supervise"
)

// main runs the CLI. supervise.Init comes first: this binary is also the shim that supervises
// the runner's children, and started as one it runs the shim and exits.
func main() { supervise.Init(); os.Exit(execute(os.Args[1:])) }
