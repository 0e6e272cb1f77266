package loadgen

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// TestStoredHeadersAreEachResultsOwn: record reuses one header map for every result of an
// attack, so each stored line must carry exactly its own response's kept headers, its own
// schedule and class, and nothing left over from the result before it. The server answers in a
// cycle of three shapes chosen by vegeta's sequence number: 200 with two outcome headers, 503
// with all four plus one that is dropped, and 200 with none.
func TestStoredHeadersAreEachResultsOwn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seq, _ := strconv.Atoi(r.Header.Get("X-Vegeta-Seq"))
		switch seq % 3 {
		case 0:
			w.Header().Set(outcome.HeaderOutcome, outcome.OK)
			w.Header().Set(outcome.HeaderPool, "a")
		case 1:
			w.Header().Set(outcome.HeaderOutcome, outcome.Rejected)
			w.Header().Set(outcome.HeaderPool, "shared")
			w.Header().Set(outcome.HeaderReason, outcome.ReasonFull)
			w.Header().Set(outcome.HeaderDependency, "A")
			w.Header().Set("X-Not-Kept", "x")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	pacer := mustPacer(t, 100, ArrivalsConstant, 0)
	var out bytes.Buffer
	r := startRun(t, []Attack{{Name: "/a", URL: srv.URL + "/a", Pacer: pacer, Out: &out}}, 300*time.Millisecond)
	checks, err := r.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	results := decodeAll(t, "/a", out.Bytes())
	if len(results) < 6 || uint64(len(results)) != checks[0].Sent {
		t.Fatalf("file has %d results, check says %d sent; want the same, at least two cycles", len(results), checks[0].Sent)
	}
	for _, res := range results {
		want := http.Header{outcome.HeaderScheduled: {strconv.FormatInt(int64(pacer.Scheduled(res.Seq)), 10)}}
		switch res.Seq % 3 {
		case 0:
			want[outcome.HeaderOutcome] = []string{outcome.OK}
			want[outcome.HeaderPool] = []string{"a"}
			want[outcome.HeaderClass] = []string{outcome.ClassOK}
		case 1:
			want[outcome.HeaderOutcome] = []string{outcome.Rejected}
			want[outcome.HeaderPool] = []string{"shared"}
			want[outcome.HeaderReason] = []string{outcome.ReasonFull}
			want[outcome.HeaderDependency] = []string{"A"}
			want[outcome.HeaderClass] = []string{outcome.ClassRejected + ":" + outcome.ReasonFull}
		case 2:
			want[outcome.HeaderClass] = []string{outcome.ClassOK}
		}
		if !equalHeader(res.Headers, want) {
			t.Errorf("result %d: headers %v; want %v", res.Seq, res.Headers, want)
		}
	}
}
