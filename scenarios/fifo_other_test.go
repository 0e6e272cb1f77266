//go:build !unix

package scenarios

import "testing"

// makeFIFO returns "": no named pipes here.
func makeFIFO(t *testing.T, dir string) string { return "" }
