//go:build !linux

package main

import "github.com/bulkheadlab/bulkhead/scenarios"

// machine reports nothing here: every figure unknown, so no estimate is refused.
func machine(dir string) scenarios.Machine { return scenarios.Machine{} }
