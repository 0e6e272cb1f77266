// Command bulkhead runs fault-injection experiments that compare one shared pool with
// per-dependency bulkheads. See the README for the two commands that matter most.
package main

import "os"

func main() { os.Exit(execute(os.Args[1:])) }
