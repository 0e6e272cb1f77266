//go:build !unix

package scenarios

// openNonblock is 0 where the system has no O_NONBLOCK (no FIFOs to wait on either).
const openNonblock = 0
