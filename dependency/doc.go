// Package dependency is the fake dependency the sample service calls: an HTTP server that answers
// every GET after a base latency plus a seeded uniform jitter, and that can be switched to answer
// an HTTP error status at once.
//
// Toxiproxy works at the TCP level and cannot produce an HTTP 500; the "http-error" fault of a
// scenario (an Effect with a Status, package faults) is SetFailing on this server. Every other
// fault is a Toxiproxy toxic or a disabled proxy in front of it (package faults/proxy).
//
// A Server is built with New and is safe for concurrent use. Handler can be mounted anywhere (an
// httptest.Server in tests); Start binds its own listener on loopback. The server's randomness
// comes from its own *rand.Rand seeded with Config.Seed, never from the global source, so the same
// seed gives the same sequence of jitters (in arrival order).
package dependency
