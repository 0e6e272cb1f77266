//go:build race

package h1

// raceEnabled is true when the race detector is built in.
const raceEnabled = true
