package attack

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// streamChunk is how many compressed bytes one results event carries (a line of about 43 KiB
// in base64): well under the line limits of log pipelines.
const streamChunk = 32 << 10

// streamResults sends the raw file at path, gzip-compressed, as results events for attack i on
// enc, then a results_end event with its size and SHA-256.
func streamResults(enc *json.Encoder, i int, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("stream results: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	chunks := &chunkWriter{emit: func(b []byte) error {
		return enc.Encode(Event{Type: EventResults, Attack: i, Data: b})
	}}
	zw := gzip.NewWriter(chunks)
	n, err := io.Copy(zw, io.TeeReader(f, h))
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = chunks.flush()
	}
	if err != nil {
		return fmt.Errorf("stream results of %s: %w", path, err)
	}
	return enc.Encode(Event{Type: EventResultsEnd, Attack: i, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// chunkWriter cuts what is written into streamChunk pieces for emit.
type chunkWriter struct {
	buf  []byte
	emit func([]byte) error
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for len(w.buf) >= streamChunk {
		if err := w.emit(w.buf[:streamChunk]); err != nil {
			return 0, err
		}
		w.buf = append(w.buf[:0], w.buf[streamChunk:]...)
	}
	return len(b), nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.emit(w.buf)
	w.buf = w.buf[:0]
	return err
}

// ErrIncomplete is wrapped by Gather's error when a raw file's stream ended before its
// results_end event or does not match its size and SHA-256: the log was cut (a rotated or
// truncated container log) and the file cannot be trusted.
var ErrIncomplete = errors.New("results stream incomplete")

// Gather reads an event stream written by ServeWith with StreamResults (a shard's stdout, a
// pod's log): it writes attack i's raw file to paths[i] (none may exist), checked against the
// size and SHA-256 its results_end event names, and returns every other event in order. Lines
// that are not events are skipped. A file whose stream is cut short or does not match is an
// error wrapping ErrIncomplete; what was gathered before is left in the file.
func Gather(events io.Reader, paths []string) ([]Event, error) {
	type file struct {
		gz  bytes.Buffer
		end *Event
	}
	files := make([]file, len(paths))
	var out []Event
	sc := bufio.NewScanner(events)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type == "" {
			continue
		}
		switch e.Type {
		case EventResults, EventResultsEnd:
			if e.Attack < 0 || e.Attack >= len(paths) {
				return out, fmt.Errorf("results of attack %d: the spec has %d attacks", e.Attack, len(paths))
			}
			if e.Type == EventResults {
				files[e.Attack].gz.Write(e.Data)
			} else {
				files[e.Attack].end = &e
			}
		default:
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read events: %w", err)
	}
	var errs []error
	for i, f := range files {
		if err := writeGathered(paths[i], &f.gz, f.end); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// writeGathered decompresses gz into a new file at path and checks it against end.
func writeGathered(path string, gz *bytes.Buffer, end *Event) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("gather results: %w", err)
	}
	h := sha256.New()
	var n int64
	if gz.Len() > 0 {
		zr, err := gzip.NewReader(gz)
		if err == nil {
			n, err = io.Copy(io.MultiWriter(out, h), zr)
		}
		if err != nil && end != nil {
			out.Close()
			return fmt.Errorf("gather %s: %v: %w", path, err, ErrIncomplete)
		}
	}
	if err := errors.Join(out.Sync(), out.Close()); err != nil {
		return fmt.Errorf("gather %s: %w", path, err)
	}
	switch sum := hex.EncodeToString(h.Sum(nil)); {
	case end == nil:
		return fmt.Errorf("gather %s: the stream ended without its results_end event (%d bytes gathered): %w", path, n, ErrIncomplete)
	case n != end.Bytes || sum != end.SHA256:
		return fmt.Errorf("gather %s: %d bytes, sha256 %s; the load generator wrote %d bytes, sha256 %s: %w", path, n, sum, end.Bytes, end.SHA256, ErrIncomplete)
	}
	return nil
}
