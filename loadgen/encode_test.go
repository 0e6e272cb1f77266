package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bulkheadlab/bulkhead/outcome"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// vegetaEncode is vegeta's own line for r: a fresh encoder each time, since vegeta's encoder
// fails every call after its first error.
func vegetaEncode(r *vegeta.Result) ([]byte, error) {
	var buf bytes.Buffer
	err := vegeta.NewJSONEncoder(&buf).Encode(r)
	return buf.Bytes(), err
}

// vegetaSorted is vegeta's line for r with the header keys in sorted order: every byte comes
// from vegeta's encoder (the line without headers, then each key with its values encoded alone);
// only the order of the keys is chosen here. vegeta writes them in random map order.
func vegetaSorted(t testing.TB, r *vegeta.Result) ([]byte, error) {
	t.Helper()
	if len(r.Headers) <= 1 {
		return vegetaEncode(r)
	}
	head := *r
	head.Headers = nil
	line, err := vegetaEncode(&head)
	if err != nil {
		return line, err
	}
	const tail = `null}` + "\n"
	if !bytes.HasSuffix(line, []byte(tail)) {
		t.Fatalf("vegeta's line for nil headers does not end in %q: %q", tail, line)
	}
	out := append(bytes.TrimSuffix(line, []byte(tail)), '{')
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range r.Headers {
			if !yield(k) {
				return
			}
		}
	})
	for i, k := range keys {
		one, err := vegetaEncode(&vegeta.Result{Headers: http.Header{k: r.Headers[k]}})
		if err != nil {
			t.Fatalf("vegeta encoding header %q: %v", k, err)
		}
		const opener, closer = `"headers":{`, "}}\n"
		i0 := bytes.Index(one, []byte(opener))
		if i0 < 0 || !bytes.HasSuffix(one, []byte(closer)) {
			t.Fatalf("vegeta's line for one header is not shaped as expected: %q", one)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, one[i0+len(opener):len(one)-len(closer)]...)
	}
	return append(out, "}}\n"...), nil
}

// decode reads one line with vegeta's JSON decoder.
func decode(t testing.TB, line []byte) vegeta.Result {
	t.Helper()
	var r vegeta.Result
	if err := vegeta.NewJSONDecoder(bytes.NewReader(line)).Decode(&r); err != nil {
		t.Fatalf("vegeta cannot decode %q: %v", line, err)
	}
	return r
}

// checkLikeVegeta is the specification of appendResult for one Result: the same error as
// vegeta's encoder with dst unchanged, or else
//   - the bytes of vegeta's line with the header keys sorted, appended after what dst held;
//   - with at most one header key, exactly vegeta's line;
//   - vegeta's decoder reads it to the same Result as vegeta's own line (unless header keys with
//     invalid UTF-8 collide, see keysValidUTF8);
//   - that Result is r, when every string is valid UTF-8 (otherwise both write U+FFFD) and the
//     zone offset is whole minutes (RFC 3339 drops an offset's seconds, so both shift the
//     instant).
func checkLikeVegeta(t testing.TB, r *vegeta.Result) {
	t.Helper()
	want, wantErr := vegetaSorted(t, r)
	prefix := []byte("previous line\n")
	got, err := appendResult(slices.Clone(prefix), r)
	if wantErr != nil {
		if err == nil || err.Error() != wantErr.Error() {
			t.Fatalf("error: got %v, want vegeta's %v", err, wantErr)
		}
		if !bytes.Equal(got, prefix) {
			t.Fatalf("on error dst was changed to %q", got)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error %v; vegeta wrote %q", err, want)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("dst's earlier bytes were overwritten: %q", got)
	}
	got = got[len(prefix):]
	if !bytes.Equal(got, want) {
		t.Fatalf("line differs from vegeta's (keys sorted)\n got %q\nwant %q", got, want)
	}
	raw, _ := vegetaEncode(r)
	if len(r.Headers) <= 1 && !bytes.Equal(got, raw) {
		t.Fatalf("line differs from vegeta's\n got %q\nwant %q", got, raw)
	}
	ours := decode(t, got)
	if theirs := decode(t, raw); keysValidUTF8(r) && !reflect.DeepEqual(ours, theirs) {
		t.Fatalf("decodes to %+v, vegeta's line to %+v", ours, theirs)
	}
	if _, offset := r.Timestamp.Zone(); allValidUTF8(r) && offset%60 == 0 && !sameResult(ours, *r) {
		t.Fatalf("round trip: decoded %+v, encoded %+v", ours, *r)
	}
}

// keysValidUTF8 reports whether the header keys are valid UTF-8. Two keys that are not may
// decode to the same key (each bad byte reads back as U+FFFD), and which of their values then
// wins depends on the order they were written in, which vegeta leaves to chance.
func keysValidUTF8(r *vegeta.Result) bool {
	for k := range r.Headers {
		if !utf8.ValidString(k) {
			return false
		}
	}
	return true
}

// allValidUTF8 reports whether every string of r is valid UTF-8: otherwise the decoder reads
// U+FFFD for each bad byte and cannot restore r.
func allValidUTF8(r *vegeta.Result) bool {
	if !keysValidUTF8(r) {
		return false
	}
	for _, s := range []string{r.Attack, r.Error, r.Method, r.URL} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, vs := range r.Headers {
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return false
			}
		}
	}
	return true
}

// sameResult is deep equality of Results, with the timestamp compared as an instant (the
// decoder cannot restore the Location) and nil kept apart from empty for the body, the headers
// and each header's values.
func sameResult(a, b vegeta.Result) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return false
	}
	a.Timestamp, b.Timestamp = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

var (
	t2024   = time.Date(2024, 5, 17, 13, 4, 5, 123456789, time.UTC)
	kolkata = time.FixedZone("IST", 5*3600+30*60)
)

// typicalResult is a result as record leaves it: no body, the outcome headers, the scheduled
// offset and the class.
func typicalResult(code uint16) *vegeta.Result {
	r := &vegeta.Result{
		Attack: "/a", Seq: 123456, Code: code, Timestamp: t2024.In(kolkata),
		Latency: 1234567 * time.Nanosecond, BytesIn: 17, Method: "GET",
		URL: "http://127.0.0.1:41234/a",
		Headers: http.Header{
			outcome.HeaderOutcome:   {outcome.OK},
			outcome.HeaderPool:      {"a"},
			outcome.HeaderScheduled: {"123456000000"},
			outcome.HeaderClass:     {outcome.OK},
		},
	}
	if code != 200 {
		r.Error = "503 Service Unavailable"
		r.Headers[outcome.HeaderOutcome] = []string{"rejected"}
		r.Headers[outcome.HeaderReason] = []string{outcome.ReasonFull}
		r.Headers[outcome.HeaderClass] = []string{"rejected"}
	}
	return r
}

func TestAppendResultMatchesVegeta(t *testing.T) {
	var allControls []byte
	for c := range 0x20 {
		allControls = append(allControls, byte(c))
	}
	var allBytes []byte
	for c := range 256 {
		allBytes = append(allBytes, byte(c))
	}
	tests := []struct {
		name string
		r    vegeta.Result
	}{
		{"zero Result: year 1, nil body, nil headers", vegeta.Result{}},
		{"typical 200 as record leaves it", *typicalResult(200)},
		{"typical 503 as record leaves it", *typicalResult(503)},
		{"transport error: code 0, error with quotes", vegeta.Result{
			Attack: "/b", Timestamp: t2024, Method: "GET", URL: "http://127.0.0.1:1/b",
			Error:   `Get "http://127.0.0.1:1/b": dial tcp 127.0.0.1:1: connect: connection refused`,
			Headers: http.Header{outcome.HeaderClass: {"transport"}},
		}},
		// Strings.
		{"every control byte: \\t \\n \\r short, the rest (\\b, \\f too) as \\u00xx", vegeta.Result{Error: string(allControls)}},
		{"quote and backslash", vegeta.Result{Error: `a"b\c\\"d\`}},
		{"HTML characters are escaped", vegeta.Result{URL: "http://x/?a=<b>&c='d'"}},
		{"DEL is not escaped", vegeta.Result{Error: "a\x7fb"}},
		{"valid non-ASCII is written as is", vegeta.Result{Error: "héllo ☃ 日本 😀 \u00a0"}},
		{"U+2028 and U+2029 are escaped", vegeta.Result{Error: "a\u2028b\u2029c\u202ad"}},
		{"U+FFFD itself is valid and written as is", vegeta.Result{Error: "\ufffd"}},
		{"lone continuation byte", vegeta.Result{Error: "a\x80b"}},
		{"truncated sequence: one \\ufffd per byte", vegeta.Result{Error: "a\xe2\x82b"}},
		{"truncated sequence at the end", vegeta.Result{Error: "a\xf0\x9f\x98"}},
		{"encoded surrogate half", vegeta.Result{Error: "\xed\xa0\x80"}},
		{"overlong encoding", vegeta.Result{Error: "\xc0\xaf"}},
		{"0xff and 0xfe", vegeta.Result{Error: "\xff\xfe"}},
		{"beyond U+10FFFF", vegeta.Result{Error: "\xf4\x90\x80\x80"}},
		{"every byte value in every string field", vegeta.Result{
			Attack: string(allBytes), Error: string(allBytes), Method: string(allBytes), URL: string(allBytes),
			Headers: http.Header{string(allBytes): {string(allBytes)}},
		}},
		// Body.
		{"empty body is \"\", not null", vegeta.Result{Body: []byte{}}},
		{"body of 1 byte: two pad chars", vegeta.Result{Body: []byte{0xff}}},
		{"body of 2 bytes: one pad char", vegeta.Result{Body: []byte{0, 0xfb}}},
		{"body of 3 bytes: no padding, + and /", vegeta.Result{Body: []byte{0xfb, 0xef, 0xff}}},
		{"binary body of every byte", vegeta.Result{Body: allBytes}},
		// Headers.
		{"empty headers are {}", vegeta.Result{Headers: http.Header{}}},
		{"nil value slice is null", vegeta.Result{Headers: http.Header{"K": nil}}},
		{"empty value slice is []", vegeta.Result{Headers: http.Header{"K": {}}}},
		{"several values, one empty", vegeta.Result{Headers: http.Header{"Set-Cookie": {"a=1", "", "b=<2>"}}}},
		{"key that needs escaping", vegeta.Result{Headers: http.Header{"K\"\\\n<&>\xff": {"v"}}}},
		{"empty key", vegeta.Result{Headers: http.Header{"": {"v"}}}},
		{"several keys, sorted by bytes, non-canonical ones too", vegeta.Result{Headers: http.Header{
			"b": {"1"}, "B": {"2"}, "a": nil, "A-b": {}, "Z": {"z1", "z2"}, "": {"e"},
		}}},
		{"more keys than the stack array holds", vegeta.Result{Headers: func() http.Header {
			h := http.Header{}
			for _, k := range strings.Fields("k j i h g f e d c b a K J I H G F E D C B A") {
				h[k] = []string{k}
			}
			return h
		}()}},
		// Timestamps.
		{"UTC: Z", vegeta.Result{Timestamp: t2024}},
		{"trailing zeros of the nanoseconds are dropped", vegeta.Result{Timestamp: time.Date(2024, 1, 2, 3, 4, 5, 120000000, time.UTC)}},
		{"whole second: no fraction", vegeta.Result{Timestamp: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{"positive zone offset", vegeta.Result{Timestamp: t2024.In(kolkata)}},
		{"negative zone offset", vegeta.Result{Timestamp: t2024.In(time.FixedZone("", -(9*3600 + 30*60)))}},
		{"zone offset with seconds: the seconds are dropped", vegeta.Result{Timestamp: t2024.In(time.FixedZone("LMT", 3600+2*60+37))}},
		{"zone offset 23:59", vegeta.Result{Timestamp: t2024.In(time.FixedZone("", 23*3600+59*60))}},
		{"local zone", vegeta.Result{Timestamp: t2024.Local()}},
		{"year 0", vegeta.Result{Timestamp: time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC)}},
		{"year 9999, last nanosecond", vegeta.Result{Timestamp: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		{"Unix epoch", vegeta.Result{Timestamp: time.Unix(0, 0).UTC()}},
		{"with a monotonic reading", vegeta.Result{Timestamp: time.Now()}},
		// Numbers.
		{"largest numbers", vegeta.Result{
			Seq: math.MaxUint64, Code: math.MaxUint16, Latency: math.MaxInt64,
			BytesOut: math.MaxUint64, BytesIn: math.MaxUint64,
		}},
		{"most negative latency", vegeta.Result{Latency: math.MinInt64}},
		{"negative latency", vegeta.Result{Latency: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLikeVegeta(t, &tt.r)
		})
	}
}

// TestAppendResultTimestampErrors: the timestamps RFC 3339 cannot hold fail as in vegeta, with
// vegeta's error (checkLikeVegeta), and leave dst as it was.
func TestAppendResultTimestampErrors(t *testing.T) {
	tests := []struct {
		name string
		ts   time.Time
	}{
		{"year -1", time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"far future", time.Unix(1<<62, 0)},
		{"zone offset 24:00", t2024.In(time.FixedZone("", 24*3600))},
		{"zone offset -99:00", t2024.In(time.FixedZone("", -99*3600))},
		{"zone offset 100:00 (three digits)", t2024.In(time.FixedZone("", 100*3600))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := typicalResult(200)
			r.Timestamp = tt.ts
			if _, err := vegetaEncode(r); err == nil {
				t.Fatalf("vegeta encodes %v: the case does not test an error", tt.ts)
			}
			checkLikeVegeta(t, r)
		})
	}
}

// randomString draws a string of pieces that stress the escaping: plain ASCII, control bytes,
// quote, backslash, HTML characters, valid runes of every width, U+2028/9, U+FFFD, and invalid
// bytes and sequences.
func randomString(rng *rand.Rand) string {
	n := rng.Intn(12)
	if rng.Intn(8) == 0 {
		n = 0
	}
	var b []byte
	for range n {
		switch rng.Intn(10) {
		case 0, 1:
			b = append(b, "abcXYZ019 /:.-_?=%"[rng.Intn(18)])
		case 2:
			b = append(b, byte(rng.Intn(0x20)))
		case 3:
			b = append(b, `"\<>&'`[rng.Intn(6)], 0x7f)
		case 4:
			b = utf8.AppendRune(b, rune(0x80+rng.Intn(0x800-0x80))) // 2 bytes
		case 5:
			r := rune(0x800 + rng.Intn(0x10000-0x800)) // 3 bytes, or a surrogate: U+FFFD
			b = utf8.AppendRune(b, r)
		case 6:
			b = utf8.AppendRune(b, rune(0x10000+rng.Intn(utf8.MaxRune-0x10000+1))) // 4 bytes
		case 7:
			b = utf8.AppendRune(b, []rune{'\u2028', '\u2029', '\ufffd', '\u202a', '\u2027'}[rng.Intn(5)])
		case 8:
			b = append(b, byte(0x80+rng.Intn(0x80))) // a lone high byte
		case 9:
			seqs := []string{"\xed\xa0\x80", "\xc0\xaf", "\xe2\x82", "\xf0\x9f\x98", "\xf4\x90\x80\x80", "\xc2"}
			b = append(b, seqs[rng.Intn(len(seqs))]...)
		}
	}
	return string(b)
}

// randomUint64 draws numbers of every magnitude: 0, small, and up to the largest.
func randomUint64(rng *rand.Rand) uint64 {
	return rng.Uint64() >> rng.Intn(65)
}

func randomTime(rng *rand.Rand) time.Time {
	var ts time.Time
	switch rng.Intn(6) {
	case 0:
		return time.Time{}
	case 1: // anywhere from year 0 to 9999, and a little beyond either end
		const year0, year10000 = -62167219200, 253402300800
		span := int64(year10000 - year0)
		ts = time.Unix(year0-span/100+rng.Int63n(span+span/50), rng.Int63n(1e9))
	case 2: // anywhere an int64 of seconds reaches: mostly outside the years RFC 3339 holds
		ts = time.Unix(int64(rng.Uint64()), int64(rng.Uint64()))
	case 3: // whole seconds and round milliseconds
		ts = time.Unix(1.7e9+rng.Int63n(1e8), int64(rng.Intn(1000))*1e6*int64(rng.Intn(2)))
	default: // now-ish
		ts = time.Unix(1.7e9+rng.Int63n(1e8), rng.Int63n(1e9))
	}
	switch rng.Intn(4) {
	case 0:
		return ts.UTC()
	case 1:
		return ts.Local()
	case 2: // offsets with seconds, and a few of 24 h or more
		return ts.In(time.FixedZone("", rng.Intn(2*26*3600)-26*3600))
	default:
		return ts.In(kolkata)
	}
}

func randomResult(rng *rand.Rand) *vegeta.Result {
	r := &vegeta.Result{
		Attack:    randomString(rng),
		Seq:       randomUint64(rng),
		Code:      uint16(randomUint64(rng)),
		Timestamp: randomTime(rng),
		Latency:   time.Duration(randomUint64(rng)),
		BytesOut:  randomUint64(rng),
		BytesIn:   randomUint64(rng),
		Error:     randomString(rng),
		Method:    randomString(rng),
		URL:       randomString(rng),
	}
	if rng.Intn(2) == 0 {
		r.Latency = -r.Latency
	}
	switch rng.Intn(3) {
	case 0: // nil body
	case 1:
		r.Body = []byte{}
	default:
		r.Body = []byte(randomString(rng))
	}
	if rng.Intn(5) > 0 {
		r.Headers = http.Header{}
		for range rng.Intn(7) {
			var vs []string
			if rng.Intn(6) > 0 {
				vs = []string{}
				for range rng.Intn(4) {
					vs = append(vs, randomString(rng))
				}
			}
			r.Headers[randomString(rng)] = vs
		}
	}
	return r
}

// TestAppendResultRandom holds appendResult to vegeta's encoder (checkLikeVegeta) over many
// random Results, from a fixed seed so that a failure repeats.
func TestAppendResultRandom(t *testing.T) {
	const seed, cases = 20240517, 10000
	rng := rand.New(rand.NewSource(seed))
	var errs, multi int
	for i := range cases {
		r := randomResult(rng)
		if _, err := vegetaEncode(r); err != nil {
			errs++
		} else if len(r.Headers) > 1 {
			multi++
		}
		func() {
			defer func() {
				if t.Failed() {
					t.Logf("case %d of seed %d: %#v", i, seed, r)
				}
			}()
			checkLikeVegeta(t, r)
		}()
	}
	// The generator must reach both the error path and the header ordering.
	if errs < cases/50 || multi < cases/10 {
		t.Errorf("of %d cases %d were timestamp errors and %d had several header keys: too few", cases, errs, multi)
	}
}

// TestAppendResultSortsHeaderKeys: whatever order vegeta happens to write several keys in,
// appendResult writes them sorted, the same line every time.
func TestAppendResultSortsHeaderKeys(t *testing.T) {
	r := typicalResult(503)
	first, err := appendResult(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	want := `"headers":{"X-Bulkhead-Outcome":["rejected"],"X-Bulkhead-Pool":["a"],"X-Bulkhead-Reason":["full"],"X-Loadgen-Class":["rejected"],"X-Loadgen-Scheduled":["123456000000"]}}` + "\n"
	if !bytes.HasSuffix(first, []byte(want)) {
		t.Fatalf("got %q, want it to end in %q", first, want)
	}
	for range 100 {
		again, _ := appendResult(nil, r)
		if !bytes.Equal(again, first) {
			t.Fatalf("a second encoding differs:\n%q\n%q", first, again)
		}
	}
}

// TestResultWriter: lines go to the buffered writer back to back, a write error comes back, and a
// timestamp error writes nothing.
func TestResultWriter(t *testing.T) {
	t.Run("lines back to back, as vegeta's encoder writes them", func(t *testing.T) {
		var got, want bytes.Buffer
		rw := resultWriter{w: bufio.NewWriter(&got)}
		enc := vegeta.NewJSONEncoder(&want)
		for _, r := range []*vegeta.Result{{Attack: "/a", Body: []byte("x")}, {}, {Error: "e"}} {
			if err := rw.write(r); err != nil {
				t.Fatal(err)
			}
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := rw.w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("got %q, want %q", got.String(), want.String())
		}
	})
	t.Run("write error", func(t *testing.T) {
		rw := resultWriter{w: bufio.NewWriterSize(failingWriter{}, 16)}
		if err := rw.write(typicalResult(200)); !errors.Is(err, errDiskFull) {
			t.Fatalf("got %v, want %v", err, errDiskFull)
		}
	})
	t.Run("timestamp error writes nothing", func(t *testing.T) {
		var got bytes.Buffer
		rw := resultWriter{w: bufio.NewWriter(&got)}
		if err := rw.write(&vegeta.Result{Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
			t.Fatal("no error for year 10000")
		}
		if err := rw.w.Flush(); err != nil || got.Len() != 0 {
			t.Fatalf("wrote %q (flush error %v)", got.String(), err)
		}
	})
}

// FuzzAppendResult holds appendResult to vegeta's encoder (checkLikeVegeta) on fuzzed Results
// with up to two header keys. Its seeds run in plain go test.
func FuzzAppendResult(f *testing.F) {
	f.Add("/a", uint64(1), uint16(200), int64(1715951045), int64(123456789), 3600*5+1800, int64(1234567),
		uint64(0), uint64(17), "", []byte(nil), false, "GET", "http://127.0.0.1:1/a",
		true, "X-Loadgen-Class", "ok", "X-Bulkhead-Pool", "a")
	f.Add("", uint64(0), uint16(0), int64(-62135596800), int64(0), 0, int64(0),
		uint64(0), uint64(0), "", []byte(nil), false, "", "",
		false, "", "", "", "")
	f.Add("\x00\t\n\r\"\\<>&\x7f", uint64(math.MaxUint64), uint16(math.MaxUint16), int64(253402300799), int64(999999999), -(23*3600 + 59*60 + 59), int64(math.MinInt64),
		uint64(math.MaxUint64), uint64(math.MaxUint64), "é\u2028\u2029\ufffd\xff\xed\xa0\x80", []byte{}, true, "\xc0\xaf", "\xe2\x82",
		true, "a", "\x80", "", "")
	f.Add("x", uint64(7), uint16(503), int64(253402300800), int64(0), 0, int64(-1),
		uint64(1), uint64(2), "e", []byte{0, 1, 2, 0xff}, true, "GET", "u",
		true, "K", "v", "K", "w")
	f.Add("x", uint64(7), uint16(503), int64(1715951045), int64(0), 24*3600, int64(-1),
		uint64(1), uint64(2), "e", []byte("body"), true, "GET", "u",
		true, "B", "", "A", "")
	f.Fuzz(func(t *testing.T, attack string, seq uint64, code uint16, sec, nsec int64, zone int, latency int64,
		bytesOut, bytesIn uint64, errStr string, body []byte, emptyBody bool, method, url string,
		headers bool, k1, v1, k2, v2 string) {
		r := &vegeta.Result{
			Attack: attack, Seq: seq, Code: code, Timestamp: time.Unix(sec, nsec).In(time.FixedZone("", zone)),
			Latency: time.Duration(latency), BytesOut: bytesOut, BytesIn: bytesIn, Error: errStr,
			Body: body, Method: method, URL: url,
		}
		if body == nil && emptyBody {
			r.Body = []byte{}
		}
		if headers {
			r.Headers = http.Header{}
			if k1 != "" || v1 != "" {
				r.Headers[k1] = []string{v1}
			}
			if k2 != "" || v2 != "" {
				r.Headers[k2] = append(r.Headers[k2], v2)
			}
		}
		checkLikeVegeta(t, r)
	})
}

// BenchmarkEncodeResult compares vegeta's JSON encoder with resultWriter (appendResult) on
// results as record leaves them, each writing through a bufio.Writer to io.Discard as drain does.
func BenchmarkEncodeResult(b *testing.B) {
	encoders := []struct {
		name string
		new  func(*bufio.Writer) func(*vegeta.Result) error
	}{
		{"vegeta", func(w *bufio.Writer) func(*vegeta.Result) error { return vegeta.NewJSONEncoder(w) }},
		{"appendResult", func(w *bufio.Writer) func(*vegeta.Result) error { return (&resultWriter{w: w}).write }},
	}
	for _, code := range []uint16{200, 503} {
		r := typicalResult(code)
		line, err := appendResult(nil, r)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range encoders {
			b.Run(e.name+"/"+strconv.Itoa(int(code)), func(b *testing.B) {
				enc := e.new(bufio.NewWriterSize(io.Discard, resultBuffer))
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				for b.Loop() {
					if err := enc(r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
