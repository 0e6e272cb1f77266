package model

// Headline is the run's answer, said first: for one endpoint the faults should not touch (the
// declared unaffected endpoint) in one fault phase, every layout's success rate and p99 of
// successes side by side, each with its 95% interval from the verdict engine.
type Headline struct {
	Phase string `json:"phase"`
	// Fault is the phase's faults in short ("A +450ms", "A reset").
	Fault    string `json:"fault"`
	Endpoint string `json:"endpoint"`
	// Layouts holds one entry per configuration (layout), in the run's order.
	Layouts []HeadlineLayout `json:"layouts"`
}

// HeadlineLayout is one layout's figures in a Headline.
type HeadlineLayout struct {
	Configuration string `json:"configuration"`
	Mode          string `json:"mode"`
	// Requests counts the endpoint's requests in the phase over every repetition.
	Requests int `json:"requests"`
	// SuccessRate is the share of requests that succeeded, SuccessP99MS the p99 of the
	// successes' latency in ms (latency figures are of successes: a fast failure cannot lower
	// it); each is the mean over repetitions with its 95% interval, null when not measurable.
	SuccessRate  *Interval `json:"success_rate"`
	SuccessP99MS *Interval `json:"success_p99_ms"`
	// Why says why a figure is null ("" when both were measured).
	Why string `json:"why,omitempty"`
}
