package bench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseEvent is one dispatched server-sent event. Its Data is the reader's
// buffer: valid until the next call of next.
type sseEvent struct {
	// ID is the last event ID after this event's fields, as a browser
	// keeps it: an event without an id field carries the previous one.
	ID string
	// HasID says whether the event had an id field of its own; the
	// stream promises one on every message, so one without is a fault.
	HasID bool
	// Type is the event field, "message" when there was none.
	Type string
	// Data is the data fields joined by newlines.
	Data []byte
}

// sseReader parses a text/event-stream body by the rules browsers follow
// (the HTML standard's event-stream interpretation): lines end in LF or
// CRLF; a line starting with a colon is a comment (the stream's pings);
// "field: value" loses one space after the colon; several data lines join
// with newlines; a blank line dispatches the event, unless it had no data;
// an id field containing NUL is ignored; a leading byte-order mark is
// skipped; an event cut off by the end of the stream is never dispatched.
// A lone CR as a line ending is not supported (no server of ours sends it).
type sseReader struct {
	r *bufio.Reader
	// lastID persists across events, as Last-Event-ID does.
	lastID string
	// comments counts comment lines, pings included.
	comments int64
	// Lines longer than the bufio buffer are assembled here.
	long []byte
	data []byte
	typ  []byte
	// started is set once the first line was read (for the BOM).
	started bool
}

// newSSEReader returns a reader of r. size is the line buffer: longer
// lines are still read whole, in an extra buffer.
func newSSEReader(r io.Reader, size int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, size)}
}

// line returns the next line without its ending. The slice is valid
// until the next call.
func (s *sseReader) line() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = s.r.ReadSlice('\n')
			s.long = append(s.long, b...)
		}
		b = s.long
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			// A last line without its ending ends no event: the
			// event it belongs to is incomplete either way.
			err = io.ErrUnexpectedEOF
			if len(b) == 0 {
				err = io.EOF
			}
		}
		return nil, err
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if !s.started {
		s.started = true
		b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	}
	return b, nil
}

// next returns the next event. It returns io.EOF when the stream ended
// between events and io.ErrUnexpectedEOF when it ended inside one.
func (s *sseReader) next() (sseEvent, error) {
	s.data, s.typ = s.data[:0], s.typ[:0]
	hasData, hasID := false, false
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && (hasData || hasID || len(s.typ) > 0) {
				err = io.ErrUnexpectedEOF
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !hasData {
				// Nothing to dispatch; the id, if any, is kept.
				s.typ = s.typ[:0]
				hasID = false
				continue
			}
			ev := sseEvent{ID: s.lastID, HasID: hasID, Type: "message", Data: s.data}
			if len(s.typ) > 0 {
				ev.Type = string(s.typ)
			}
			return ev, nil
		}
		if line[0] == ':' {
			s.comments++
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		case "event":
			s.typ = append(s.typ[:0], value...)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.lastID = string(value)
				hasID = true
			}
		}
		// retry and unknown fields are ignored, as a browser does
		// (retry sets its reconnection delay, which the bench fixes).
	}
}
