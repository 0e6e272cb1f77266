package meter

import (
	"slices"
	"testing"
)

// scanned feeds stream to a scanner in pieces of size n and returns what it saw: the number of
// requests started with their methods (request scanner), or the statuses of the responses
// completed (response scanner), and its final state.
func scanned(resp bool, stream string, n int, methods []string) (starts int, got []string, codes []int, st state) {
	s := &scanner{resp: resp}
	front := 0
	s.onStart = func() { starts++ }
	s.onMethod = func(m string) { got = append(got, m) }
	s.frontMethod = func() string {
		if front < len(methods) {
			return methods[front]
		}
		return ""
	}
	for i := 0; i < len(stream); i += n {
		s.feed([]byte(stream[i:min(i+n, len(stream))]))
		for _, c := range s.ended {
			codes = append(codes, c)
			front++
		}
		s.ended = s.ended[:0]
	}
	s.closed()
	codes = append(codes, s.ended...)
	return starts, got, codes, s.st
}

// Every message boundary is found wherever the stream is split: one byte at a time, a few
// bytes, or whole.
func TestScannerRequests(t *testing.T) {
	cases := []struct {
		name    string
		stream  string
		methods []string
		state   state
	}{
		{"two GETs pipelined", "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", []string{"GET", "GET"}, stIdle},
		{"POST with a length, then a GET", "POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\n\r\n", []string{"POST", "GET"}, stIdle},
		{"chunked POST with a trailer", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: 1\r\n\r\n", []string{"POST"}, stIdle},
		{"blank lines before a request", "\r\n\r\nGET / HTTP/1.0\r\n\r\n", []string{"GET"}, stIdle},
		{"a request cut in its headers", "GET / HTTP/1.1\r\nHo", []string{"GET"}, stHeader},
		{"HTTP/2's preface is not HTTP/1.1", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", nil, stOpaque},
		{"a database protocol", "\x00\x00\x00\x08\x04\xd2\x16\x2f\n", nil, stOpaque},
		{"CONNECT opens a tunnel", "CONNECT db:5432 HTTP/1.1\r\n\r\n\x00\x01", []string{"CONNECT"}, stOpaque},
	}
	for _, c := range cases {
		for _, n := range []int{1, 3, 7, len(c.stream)} {
			starts, got, _, st := scanned(false, c.stream, n, nil)
			wantStarts := len(c.methods)
			if c.state == stOpaque && len(c.methods) == 0 {
				wantStarts = 1 // the first byte starts a message before it reads as not HTTP
			}
			if starts != wantStarts || !slices.Equal(got, c.methods) || st != c.state {
				t.Errorf("%s, pieces of %d: %d starts, methods %q, state %d; want %d, %q, %d",
					c.name, n, starts, got, st, wantStarts, c.methods, c.state)
			}
		}
	}
}

func TestScannerResponses(t *testing.T) {
	cases := []struct {
		name    string
		stream  string
		methods []string // of the requests answered, in order
		codes   []int
		state   state
	}{
		{"two with lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 500 x\r\ncontent-length: 0\r\n\r\n", []string{"GET", "GET"}, []int{200, 500}, stIdle},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n", []string{"GET"}, []int{200}, stIdle},
		{"HEAD has no body whatever its length says", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 x\r\nContent-Length: 5\r\n\r\n", []string{"HEAD", "GET", "GET"}, []int{200, 204, 304}, stIdle},
		{"100 Continue is interim", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx", []string{"POST"}, []int{201}, stIdle},
		{"a body until the close", "HTTP/1.0 200 OK\r\n\r\nall of it until the close", []string{"GET"}, []int{200}, stIdle},
		{"a response cut in its body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", []string{"GET"}, nil, stBody},
		{"101 switches protocols", "HTTP/1.1 101 Switching Protocols\r\n\r\n\x81\x05hello", []string{"GET"}, []int{101}, stOpaque},
		{"not HTTP", "+OK\r\n", []string{"GET"}, nil, stOpaque},
		{"a bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", []string{"GET"}, nil, stOpaque},
	}
	for _, c := range cases {
		for _, n := range []int{1, 2, 5, len(c.stream)} {
			_, _, codes, st := scanned(true, c.stream, n, c.methods)
			if !slices.Equal(codes, c.codes) || st != c.state {
				t.Errorf("%s, pieces of %d: codes %v, state %d; want %v, %d", c.name, n, codes, st, c.codes, c.state)
			}
		}
	}
}

// A header section longer than maxHead is not read as HTTP: the connection turns opaque rather
// than buffering without bound.
func TestScannerBoundsItsBuffer(t *testing.T) {
	s := &scanner{}
	s.feed([]byte("GET / HTTP/1.1\r\n"))
	long := make([]byte, maxLine+1)
	for i := range long {
		long[i] = 'a'
	}
	s.feed(long)
	if s.st != stOpaque || len(s.line) > maxLine {
		t.Errorf("after a %d-byte line: state %d, line buffer %d bytes; want opaque, at most %d", len(long), s.st, len(s.line), maxLine)
	}
}
