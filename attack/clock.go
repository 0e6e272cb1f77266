package attack

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ClockOffset is a load generator's estimate of how far its wall clock is from a reference
// clock, measured the way NTP does over a few HTTP round trips (MeasureClock): Offset is the
// reference's time minus this clock's at the same instant, known to within Uncertainty (half the
// shortest round trip). Shards whose offsets differ by D sent on schedules D apart, whatever
// their send lag says: that is what their checks cannot see by themselves. Durations are integer
// nanoseconds in JSON.
type ClockOffset struct {
	Reference   string        `json:"reference"`
	Offset      time.Duration `json:"offset_ns"`
	Uncertainty time.Duration `json:"uncertainty_ns"`
	Samples     int           `json:"samples"`
}

// ClockHandler answers every GET with the server's wall clock as decimal Unix nanoseconds: the
// reference MeasureClock reads. The runner serves it; on a cluster any one pod can.
func ClockHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strconv.FormatInt(time.Now().UnixNano(), 10))
	})
}

// clockSamples is how many round trips MeasureClock takes; the shortest one decides.
const clockSamples = 8

// MeasureClock estimates this machine's clock offset from the ClockHandler at url: of
// clockSamples round trips on one keep-alive connection, the shortest, taking the reference's
// reading to be halfway through it. It blocks for the round trips (each bounded by a second and
// ctx) and returns an error naming the url when none succeeded.
func MeasureClock(ctx context.Context, url string) (ClockOffset, error) {
	client := &http.Client{Timeout: time.Second}
	best := ClockOffset{Reference: url, Uncertainty: -1}
	var lastErr error
	for range clockSamples {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return ClockOffset{}, fmt.Errorf("clock reference %s: %w", url, err)
		}
		sent := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			lastErr = err
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
		resp.Body.Close()
		got := time.Now()
		ns, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || perr != nil || resp.StatusCode != http.StatusOK {
			lastErr = fmt.Errorf("status %d, body %q", resp.StatusCode, b)
			continue
		}
		half := got.Sub(sent) / 2
		if best.Uncertainty < 0 || half < best.Uncertainty {
			best.Uncertainty = half
			best.Offset = time.Unix(0, ns).Sub(sent.Add(half))
		}
		best.Samples++
	}
	if best.Samples == 0 {
		return ClockOffset{}, fmt.Errorf("clock reference %s: no reading: %w", url, lastErr)
	}
	return best, nil
}
