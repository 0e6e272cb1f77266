package main

// The engines a run can use besides the local one register themselves when imported.
import _ "github.com/bulkheadlab/bulkhead/kube"
