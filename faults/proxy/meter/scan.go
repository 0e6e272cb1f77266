package meter

import (
	"bytes"
	"strconv"
	"strings"
)

// Limits of the scanner: a start line, header line or chunk-size line longer than maxLine, or a
// header section larger than maxHead, is not HTTP/1.1 as the target and its dependency speak it
// here; the connection is then passed on without being read (opaque).
const (
	maxLine = 16 << 10
	maxHead = 256 << 10
)

// state is where a scanner is within the message stream of one direction.
type state uint8

const (
	stIdle       state = iota // between messages (a CR or LF here is skipped, as RFC 9112 allows)
	stStartLine               // reading the request line or status line
	stHeader                  // reading header lines
	stBody                    // skipping remaining bytes of a body with a Content-Length
	stChunkSize               // reading a chunk-size line
	stChunkData               // skipping remaining bytes of a chunk
	stChunkEnd                // reading the CRLF after a chunk's data
	stTrailer                 // reading trailer lines after the last chunk
	stUntilClose              // a response body delimited by the connection's close
	stOpaque                  // not HTTP/1.1 (or a tunnel after 101 / CONNECT): no longer read
)

// scanner finds the boundaries of the HTTP/1.1 messages in one direction of a connection's byte
// stream (RFC 9112 section 6: Content-Length, chunked, or until close), without copying or
// buffering the stream: feed is called with each chunk as it passes and only the current line
// is kept. A request scanner (resp false) reports each request's start and method; a response
// scanner reports each final response's end and status, asking the connection for the method
// of the request it answers (a HEAD's response has no body). 1xx responses other than 101 are
// interim and end nothing. It is not safe for concurrent use.
type scanner struct {
	resp  bool
	st    state
	line  []byte
	head  int   // bytes of the current header section
	left  int64 // bytes of body or chunk left
	cl    int64 // Content-Length of the current message, -1 when absent
	chunk bool  // Transfer-Encoding ends in chunked
	code  int   // status of the current response

	// onStart is called at the first byte of a request (request scanner).
	onStart func()
	// onMethod is called with a request's method once its request line is read.
	onMethod func(string)
	// frontMethod returns the method of the oldest unanswered request (response scanner).
	frontMethod func() string
	// ended receives the status of each final response completed in the current feed.
	ended []int
}

// feed scans p, the next bytes of the stream.
func (s *scanner) feed(p []byte) {
	for len(p) > 0 {
		switch s.st {
		case stOpaque, stUntilClose:
			return
		case stIdle:
			if p[0] == '\r' || p[0] == '\n' {
				p = p[1:]
				continue
			}
			s.st, s.head, s.cl, s.chunk, s.code = stStartLine, 0, -1, false, 0
			if !s.resp && s.onStart != nil {
				s.onStart()
			}
		case stBody, stChunkData:
			n := min(int64(len(p)), s.left)
			p, s.left = p[n:], s.left-n
			if s.left == 0 {
				if s.st == stBody {
					s.finish()
				} else {
					s.st = stChunkEnd
				}
			}
		default: // line states
			i := bytes.IndexByte(p, '\n')
			part := p
			if i >= 0 {
				part = p[:i]
			}
			if len(s.line)+len(part) > maxLine || (s.st == stHeader || s.st == stStartLine) && s.head+len(part) > maxHead {
				s.st = stOpaque
				return
			}
			s.line = append(s.line, part...)
			s.head += len(part) + 1
			if i < 0 {
				return
			}
			p = p[i+1:]
			line := bytes.TrimSuffix(s.line, []byte{'\r'})
			s.lineDone(line)
			s.line = s.line[:0]
		}
	}
}

// lineDone handles one complete line (without its CRLF) in the current line state.
func (s *scanner) lineDone(line []byte) {
	switch s.st {
	case stStartLine:
		s.startLine(line)
	case stHeader:
		if len(line) == 0 {
			s.headersDone()
			return
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			s.st = stOpaque
			return
		}
		switch {
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			if err != nil || n < 0 {
				s.st = stOpaque
				return
			}
			s.cl = n
		case asciiEqualFold(name, "transfer-encoding"):
			codings := strings.Split(string(value), ",")
			s.chunk = strings.EqualFold(strings.TrimSpace(codings[len(codings)-1]), "chunked")
		}
	case stChunkSize:
		size, _, _ := bytes.Cut(line, []byte{';'})
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			s.st = stOpaque
			return
		}
		if n == 0 {
			s.st = stTrailer
			return
		}
		s.st, s.left = stChunkData, n
	case stChunkEnd:
		if len(line) != 0 {
			s.st = stOpaque
			return
		}
		s.st = stChunkSize
	case stTrailer:
		if len(line) == 0 {
			s.finish()
		}
	}
}

// startLine reads a request line ("GET /x HTTP/1.1") or a status line ("HTTP/1.1 200 OK").
func (s *scanner) startLine(line []byte) {
	if s.resp {
		rest, ok := bytes.CutPrefix(line, []byte("HTTP/1."))
		if !ok || len(rest) < 5 || rest[1] != ' ' {
			s.st = stOpaque
			return
		}
		code, err := strconv.Atoi(string(rest[2:5]))
		if err != nil || code < 100 || code > 999 {
			s.st = stOpaque
			return
		}
		s.code, s.st = code, stHeader
		return
	}
	method, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(method) == 0 || !bytes.HasSuffix(rest, []byte(" HTTP/1.1")) && !bytes.HasSuffix(rest, []byte(" HTTP/1.0")) {
		s.st = stOpaque
		return
	}
	if s.onMethod != nil {
		s.onMethod(string(method))
	}
	if string(method) == "CONNECT" {
		s.st = stOpaque // a tunnel: what follows is not HTTP
		return
	}
	s.st = stHeader
}

// headersDone decides how the current message's body is delimited (RFC 9112 section 6.3).
func (s *scanner) headersDone() {
	if !s.resp {
		switch {
		case s.chunk:
			s.st = stChunkSize
		case s.cl > 0:
			s.st, s.left = stBody, s.cl
		default:
			s.finish()
		}
		return
	}
	switch {
	case s.code == 101:
		s.finish()
		s.st = stOpaque // switched protocols
		return
	case s.code < 200:
		s.st = stIdle // interim: the final response follows
		return
	case s.code == 204 || s.code == 304 || s.frontMethod != nil && s.frontMethod() == "HEAD":
		s.finish()
	case s.chunk:
		s.st = stChunkSize
	case s.cl == 0:
		s.finish()
	case s.cl > 0:
		s.st, s.left = stBody, s.cl
	default:
		s.st = stUntilClose
	}
}

// finish ends the current message.
func (s *scanner) finish() {
	if s.resp {
		s.ended = append(s.ended, s.code)
	}
	s.st = stIdle
}

// closed is called at the end of the stream: a response read until the close ends there.
func (s *scanner) closed() {
	if s.st == stUntilClose {
		s.finish()
	}
}

// asciiEqualFold reports whether b equals the lower-case ASCII name, ignoring case.
func asciiEqualFold(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
