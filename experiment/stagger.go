package experiment

import (
	"math"
	"time"
)

// The runner staggers constant-rate attacks (loadgen.Shifted with the arrival offset as its
// lead) so that N endpoints do not send in the same instant. A burst of N simultaneous sends is
// not the open-model load the scenario describes: on this machine 500 aligned attacks lag their
// schedule by 40 to 90 ms and every endpoint sees the burst's queueing as latency.

// staggerFrom is the number of endpoints from which the runner staggers constant-rate attacks.
// Even two aligned attacks (the hypothesis' /a and /b at 50/s each) put two sends in the same
// instant 50 times a second, which on a 2-core machine is what pushes the send-lag p99 past
// 1 ms; half an interval apart they do not contend.
const staggerFrom = 2

// offsetStep is the golden-ratio step (2 - phi) by which each further repetition moves the
// streams: its multiples mod 1 never repeat and stay evenly spread, so any number of repetitions
// keeps sampling new offsets.
const offsetStep = 0.3819660112501051

// arrivalOffset is the lead of constant-rate stream i of n at rate per second in repetition rep
// (1-based), as a fraction of one interval: (i + v)/n for i >= 1, 0 for the first stream.
// Repetition 1 has v = 0: the streams evenly spread, what a single run has always done.
// Repetition r moves every stream but the first by v_r/n of an interval, v_r = 2 frac(1/2 +
// (r-1) x offsetStep) - 1 in (-1, 1): the other streams stay evenly spaced among themselves while
// their offset to the first sweeps the whole interval (with two streams at 50/s the second leads
// by 10 ms, 17.6 ms and 5.3 ms in repetitions 1 to 3). So the result's dependence on the offset
// between constant-rate streams shows up as spread across repetitions instead of staying hidden
// behind one arbitrary choice. No two streams share an instant: the smallest gap is
// (1 - |v_r|)/n of an interval. The offsets are recorded in every manifest. With load.drift the
// offset is where the stream starts: it then drifts through every offset (planAttack).
func arrivalOffset(i, n int, rate float64, rep int) time.Duration {
	if n < staggerFrom || rate <= 0 || i <= 0 || i >= n {
		return 0
	}
	_, f := math.Modf(0.5 + float64(max(rep, 1)-1)*offsetStep)
	v := 2*f - 1
	return time.Duration((float64(i) + v) / float64(n) * float64(time.Second) / rate)
}
