// Package faults defines the fault types a scenario can put in front of a dependency, one small
// file per type behind one interface, the way Toxiproxy defines its toxics (toxics/*.go).
//
// A fault type is a struct of parameters (Params) whose yaml tags name its keys in a scenario file
// and whose json tags name them in a run folder's manifest. Its file registers it (Register, from
// an init function) and declares, beside the parameters, how they are checked (Check, returning
// each problem with the key it is about) and what the fault installs (Effect), described as data:
// a Toxiproxy toxic (type and attributes), a disabled proxy, or the dependency's own error
// status. The registry is the one list of fault types: the scenario loader decodes a fault's keys
// by asking it (Fields), and nothing else names the types. Adding a fault type is one file here
// and its test.
//
// One struct, Fault, carries a fault from the scenario file (scenarios.Phase) to the run folder
// (rundir.Phase, with the measured switch times) to the report. It adds what every toxic takes:
// Toxicity (the share of connections the toxic is drawn for) and Direction (the stream it acts
// on). This package does not talk to Toxiproxy and imports nothing outside the standard library:
// package faults/proxy installs an Effect on an embedded or an external Toxiproxy, and the runner
// switches the dependency's status.
//
// The types, each acting on the downstream stream (dependency -> service) unless the fault says
// upstream:
//
//	latency     latency toxic: each chunk of data is held Latency (± Jitter), whole milliseconds
//	bandwidth   bandwidth toxic: data flows at RateKBps
//	slicer      slicer toxic: data is cut into chunks of about AverageSize bytes, Delay apart
//	slow_close  slow_close toxic: the close of a connection is held Delay
//	limit_data  limit_data toxic: the connection is closed once Bytes went through it
//	timeout     timeout toxic: data is dropped; the connection hangs until the caller's own
//	            timeout fires (CloseAfter 0), or is closed after CloseAfter
//	reset       reset_peer toxic, timeout 0: the connection is reset at the first data
//	down        not a toxic: the proxy is disabled (connection refused, live connections closed)
//	http-error  not a toxic: the dependency answers every request with Status (default 500)
//
// Toxicity is drawn once per TCP connection (when it opens, or when the toxic is added), not per
// request: through a keep-alive pool, toxicity 0.5 leaves some connections untouched for good.
package faults
