//go:build !linux

package h1

import (
	"io"
	"net"
)

// newIO returns nc itself: raw system calls are used on Linux only (rawio_linux.go).
func newIO(nc net.Conn) io.ReadWriter { return nc }
