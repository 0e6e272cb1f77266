package loadgen

import (
	"net"
	"net/http"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen/h1"
)

// idleCloser is an attack's transport, whose idle connections the run closes at its end
// (vegeta's Attacker would keep them open forever).
type idleCloser interface{ CloseIdleConnections() }

// netHTTP makes attacks send through net/http's Transport instead of h1's; only figures set it,
// to measure the two side by side.
var netHTTP = false

// newClient returns an attack's HTTP client and its transport. The transport is h1's, which does
// each exchange in the vegeta worker's own goroutine and bounds it with one deadline on the
// connection (an http.Client timeout would add a timer and a goroutine to every request). No
// proxy: the load goes to the URL given. Redirects are results, not followed.
func newClient(o options) (*http.Client, idleCloser) {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if netHTTP {
		tr := &http.Transport{
			DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: o.connections,
			DisableKeepAlives:   !o.keepAlive,
		}
		return &http.Client{Transport: tr, Timeout: o.timeout, CheckRedirect: noRedirect}, tr
	}
	tr := h1.New(h1.Options{
		Timeout:           o.timeout,
		MaxIdlePerHost:    o.connections,
		DisableKeepAlives: !o.keepAlive,
		KeepAlive:         30 * time.Second,
	})
	return &http.Client{Transport: tr, CheckRedirect: noRedirect}, tr
}
