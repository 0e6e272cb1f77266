package service

import (
	"net"
	"sync"
)

// countingListener counts the connections it has accepted and not yet closed and, when limit > 0,
// caps them the way netutil.LimitListener does: Accept blocks while limit connections are open,
// so further clients wait in the kernel's accept backlog.
type countingListener struct {
	net.Listener
	sem   chan struct{} // nil when there is no cap
	open  *gauge
	done  chan struct{}
	close sync.Once
}

func newCountingListener(l net.Listener, limit int, open *gauge) *countingListener {
	cl := &countingListener{Listener: l, open: open, done: make(chan struct{})}
	if limit > 0 {
		cl.sem = make(chan struct{}, limit)
	}
	return cl
}

// Accept waits for a free place under the cap (or for Close) and then for a connection.
func (l *countingListener) Accept() (net.Conn, error) {
	if l.sem != nil {
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release()
		return nil, err
	}
	l.open.inc()
	return &countedConn{Conn: c, onClose: func() { l.open.dec(); l.release() }}, nil
}

func (l *countingListener) release() {
	if l.sem != nil {
		<-l.sem
	}
}

// Close closes the listener and unblocks an Accept waiting under the cap.
func (l *countingListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// countedConn runs onClose once, on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	onClose func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.onClose)
	return err
}
