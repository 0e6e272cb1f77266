// Package hosts holds the recipe for running bulkhead's parts on separate hosts, and its
// executable version: scenario.yaml (seed 004's P1 and P2 with the load generator, the service
// under test and the dependencies behind Toxiproxy on three hosts), README.md (the commands per
// host) and hosts_test.go, which builds those three hosts as Linux network namespaces on one
// LAN and runs the scenario across them. The Go package is only the test's home.
package hosts
