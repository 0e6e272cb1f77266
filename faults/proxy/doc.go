// Package proxy puts Toxiproxy proxies in front of dependencies and installs faults' effects on
// them (faults.Effect: a toxic described as data, or a disabled proxy), behind one small
// interface, Injector, whose calls take a context and wrap their errors. Two implementations:
// Embedded runs Toxiproxy in-process (no HTTP API, no fixed port), External drives a separate
// toxiproxy-server through its HTTP API.
//
// A proxy listens on 127.0.0.1 on an ephemeral port in front of one dependency; the service is
// pointed at the proxy. Apply adds one effect to what the proxy has (a toxic of the same type and
// stream is replaced); Clear removes every toxic and re-enables the proxy. The fault types, their
// parameters and the toxic each installs are defined in package faults; this package knows none
// of them by name.
//
// How faults meet live keep-alive connections (measured with the tests in this package, Toxiproxy
// v2.12.0): adding a toxic affects connections that are already open at once, and removing a
// latency toxic releases the data it holds at once. Disabling a proxy (down) closes its
// connections. A reset_peer toxic added while a pooled connection is open closes that connection
// with a FIN, not an RST (Toxiproxy sets SO_LINGER 0 only on connections opened while the toxic
// exists), so the request on it reads EOF; Go's transport then retries an idempotent GET on a fresh
// connection, which is reset with an RST. A GET client therefore sees "connection reset by peer"
// either way, but the dependency serves that request twice. Removing a timeout toxic closes the
// connections it was stalling (the caller reads EOF). A toxic's toxicity is drawn once per
// connection and toxic, when the connection opens or the toxic is added.
//
// Two Toxiproxy leaks (v2.5.0 to v2.12.0) this package works around or cannot: a proxy stopped
// while a latency toxic holds data leaves that toxic's goroutine asleep for the whole latency, so
// Close removes toxics before removing proxies. And when a timeout toxic is removed and response bytes reach
// the proxy in the instant between the toxic's cleanup and the close of the connection, the link
// goroutine that receives them blocks forever (Toxiproxy does not rewire the chain after that
// cleanup). Seen in tests where the dependency answers within microseconds of Clear; a dependency
// answering later finds the connection closed. At most a goroutine per connection open at Clear.
package proxy
