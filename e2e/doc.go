// Package e2e holds the end-to-end tests: the built-in seed scenarios, scaled down, run through
// the real runner (service, embedded Toxiproxy, load generator) on loopback and judged from their
// run folders by the report. They take seconds each, so every one is skipped with -short; the
// packages they exercise keep their fast unit tests.
package e2e
