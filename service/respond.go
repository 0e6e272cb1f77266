package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/sony/gobreaker/v2"
)

// Errors of a dependency call that the outcome mapping branches on.
var (
	// ErrTimeout: the dependency call used up its budget (ClientTimeout, or the request's shared
	// budget). It maps to 504.
	ErrTimeout = errors.New("dependency call timed out")
	// ErrConnLimit: a new connection was needed and MaxOutboundConns connections were open. It
	// maps to 502 with reason conn-limit.
	ErrConnLimit = errors.New("outbound connection limit reached")
)

// StatusError is a dependency that answered with a status outside 2xx.
type StatusError struct {
	Dependency string
	Code       int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("dependency %s answered status %d", e.Dependency, e.Code)
}

// Upstream failure reasons (outcome.HeaderReason when the outcome is upstream).
const (
	ReasonReset     = "reset"
	ReasonRefused   = "refused"
	ReasonEOF       = "eof"
	ReasonConnLimit = "conn-limit"
	ReasonOther     = "other"
)

// response is the classified outcome of one inbound request: the one place where errors become
// status codes and headers (see outcome.go for the contract).
type response struct {
	status     int
	outcome    string
	pool       string
	reason     string
	dependency string
}

// classify maps the error of a call to dependency dep onto the outcome contract. A nil error is
// 200 ok. Order matters: a rejection is checked before a timeout because a pool's wait-timeout is
// a rejection, not a dependency timeout.
func classify(dep string, err error) response {
	if err == nil {
		return response{status: http.StatusOK, outcome: outcome.OK}
	}
	r := response{dependency: dep}
	var rej *RejectedError
	var st *StatusError
	var ne net.Error
	switch {
	case errors.As(err, &rej):
		r.status, r.outcome, r.pool, r.reason = http.StatusServiceUnavailable, outcome.Rejected, rej.Pool, rej.Reason
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		r.status, r.outcome, r.pool, r.reason = http.StatusServiceUnavailable, outcome.Rejected, "breaker:"+dep, outcome.ReasonBreakerOpen
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		r.status, r.outcome = http.StatusGatewayTimeout, outcome.Timeout
	default:
		r.status, r.outcome = http.StatusBadGateway, outcome.Upstream
		switch {
		case errors.As(err, &st):
			r.reason = "status-" + strconv.Itoa(st.Code)
		case errors.Is(err, ErrConnLimit):
			r.reason = ReasonConnLimit
		case errors.Is(err, syscall.ECONNRESET):
			r.reason = ReasonReset
		case errors.Is(err, syscall.ECONNREFUSED):
			r.reason = ReasonRefused
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			r.reason = ReasonEOF
		default:
			r.reason = ReasonOther
		}
	}
	return r
}

// write sends r as the response: status, the X-Bulkhead-* headers and a one-line body that
// repeats them for humans.
func (r response) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set(outcome.HeaderOutcome, r.outcome)
	if r.pool != "" {
		h.Set(outcome.HeaderPool, r.pool)
	}
	if r.reason != "" {
		h.Set(outcome.HeaderReason, r.reason)
	}
	if r.dependency != "" {
		h.Set(outcome.HeaderDependency, r.dependency)
	}
	w.WriteHeader(r.status)
	if r.status == http.StatusOK {
		io.WriteString(w, "ok\n")
		return
	}
	fmt.Fprintf(w, "%s %s %s %s\n", r.outcome, r.dependency, r.pool, r.reason)
}
