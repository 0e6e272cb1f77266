package h1

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a TCP connection as net.Conn does (non-blocking socket, parking in the
// netpoller until it is ready, the connection's deadline), but makes each read(2) and write(2)
// with syscall.RawSyscall, without the runtime's system-call bookkeeping.
//
// Why: the socket is non-blocking, so the call never blocks, yet syscall.Syscall tells the
// scheduler the goroutine may block. The scheduler then wakes its monitor thread (sysmon) from
// its sleep, and that thread polls every 20 µs for a while and may hand the P to another thread
// when a call takes longer than that, which a loopback write does (it runs the receiver's TCP
// stack). On one core each of those wakeups is a context switch: at 8,000 requests/s the monitor
// thread alone switched about 6,000 times a second (issue 12).
//
// Errors are the ones net.Conn gives for the same failure, *net.OpError with Op "read" or
// "write" around an *os.SyscallError, os.ErrDeadlineExceeded or net.ErrClosed, and io.EOF
// bare, so that they read and classify the same (TestRawIOErrorsAreNetConns).
type rawIO struct {
	nc *net.TCPConn
	rc syscall.RawConn
}

// newIO returns the reader and writer of nc's bytes: rawIO for a TCP connection, nc itself
// otherwise.
func newIO(nc net.Conn) io.ReadWriter {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	return &rawIO{nc: tc, rc: rc}
}

// Read reads into p as net.Conn.Read does: it blocks the goroutine (not the thread) until some
// bytes arrive, the peer closes (io.EOF) or the deadline passes.
func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, e := sysRead(fd, p)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = m, e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, r.opError("read", err)
	case errno != 0:
		return 0, r.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p as net.Conn.Write does, blocking the goroutine while the socket's
// buffer is full; on an error it returns how much was written.
func (r *rawIO) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, e := sysWrite(fd, p[n:])
			switch e {
			case 0:
				n += m
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, r.opError("write", err)
	case errno != 0:
		return n, r.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// opError wraps err as net.Conn does for op. RawConn reports the netpoller's errors (deadline,
// closed) as an *net.OpError of its own ("raw-read", "raw-write"); the error inside is kept.
func (r *rawIO) opError(op string, err error) error {
	if oe, ok := errors.AsType[*net.OpError](err); ok {
		err = oe.Err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: r.nc.LocalAddr(), Addr: r.nc.RemoteAddr(), Err: err}
}

// sysRead is read(2) of fd into p, which is not empty. Under the race detector it is
// syscall.Read, whose annotations tell the detector that what was written before the bytes were
// sent happened before they were read; a raw call would hide that and report races that are not.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	if raceEnabled {
		n, err := syscall.Read(int(fd), p)
		return max(n, 0), errnoOf(err)
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// sysWrite is write(2) of p, which is not empty, to fd; syscall.Write under the race detector,
// as sysRead.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	if raceEnabled {
		n, err := syscall.Write(int(fd), p)
		return max(n, 0), errnoOf(err)
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

// errnoOf returns err's errno: 0 for nil, EIO for an error that is not one (syscall.Read and
// Write return only errnos).
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}
