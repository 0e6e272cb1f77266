// Package scrape reads a target's Prometheus metrics endpoint and turns it into the resources
// the report attributes from (outcome.Resource, one row of resources.csv), so a system under test
// that is not the built-in service is attributed the same way as the built-in one.
//
// A Scraper fetches the page over HTTP (with a context and a timeout), parses the text format
// with github.com/prometheus/common/expfmt and applies Mappings: the built-in ones (Resilience4j's
// bulkhead, thread-pool bulkhead and circuit breaker metrics as its Micrometer binding names them,
// this project's own names, Go's goroutines) and then a scenario's own. Parse does the same on
// any reader, without the network.
package scrape
