package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
)

// chunkReader returns its data in pieces whose sizes cycle through sizes,
// so a test controls exactly where the reads of a stream break.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n = max(c.sizes[c.i%len(c.sizes)], 1)
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// piecesReader returns its pieces as a socket would: each in reads of its
// own, as much of it as fits in each; a piece is gone once read whole.
type piecesReader struct{ pieces []string }

func (p *piecesReader) Read(b []byte) (int, error) {
	for len(p.pieces) > 0 && p.pieces[0] == "" {
		p.pieces = p.pieces[1:]
	}
	if len(p.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.pieces[0])
	p.pieces[0] = p.pieces[0][n:]
	if p.pieces[0] == "" {
		p.pieces = p.pieces[1:]
	}
	return n, nil
}

// snap is an Event copied out of the Reader's buffers.
type snap struct {
	Raw        string
	Lines      []string // raw lines
	Type       string
	Data       string
	DataNil    bool
	ID         string
	HasID      bool
	Retry      int64
	HasRetry   bool
	Dispatched bool
	Complete   bool
	Unparsed   bool
	BOM        bool
	Priming    bool
}

func snapshot(e *Event) snap {
	s := snap{
		Raw: string(e.Raw), Type: string(e.Type), Data: string(e.Data), DataNil: e.Data == nil,
		ID: string(e.ID), HasID: e.HasID, Retry: e.Retry, HasRetry: e.HasRetry,
		Dispatched: e.Dispatched, Complete: e.Complete, Unparsed: e.Unparsed, BOM: e.BOM,
		Priming: e.Priming(),
	}
	for _, l := range e.Lines {
		s.Lines = append(s.Lines, string(l.Raw))
	}
	return s
}

// readAll reads src to the end and returns snapshots of every event and
// the error that ended the stream (nil for io.EOF).
func readAll(t testing.TB, src io.Reader, maxBlock int) ([]snap, error) {
	t.Helper()
	return drain(NewReader(src, maxBlock))
}

// drain is readAll of a Reader already made.
func drain(r *Reader) ([]snap, error) {
	var out []snap
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, snapshot(e))
	}
}

func rawOf(events []snap) string {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString(e.Raw)
	}
	return b.String()
}

// msg is an event as a client's application receives it.
type msg struct {
	Type, Data, LastID string
	Retry              int64
}

// view is what a client makes of a whole stream.
type view struct {
	Msgs   []msg
	LastID string
	Retry  int64
}

// clientView replays events as a client would: the id of a complete block
// is committed, a retry applies at once, and a dispatched block fires a
// message carrying the last event id.
func clientView(events []snap) view {
	var v view
	for _, e := range events {
		if e.Unparsed {
			continue
		}
		if e.HasRetry {
			v.Retry = e.Retry
		}
		if !e.Complete {
			continue
		}
		if e.HasID {
			v.LastID = e.ID
		}
		if e.Dispatched {
			typ := e.Type
			if typ == "" {
				typ = "message"
			}
			v.Msgs = append(v.Msgs, msg{Type: typ, Data: e.Data, LastID: v.LastID, Retry: v.Retry})
		}
	}
	return v
}

// eachEvent calls fn with every event of r until the end of its stream,
// failing t on any error but io.EOF.
func eachEvent(t testing.TB, r *Reader, fn func(e *Event)) {
	t.Helper()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e)
	}
}

// refParse is a deliberately plain reading of the WHATWG parsing rules,
// applied to a whole stream held in memory. The Reader is checked against it.
func refParse(in []byte) view {
	var v view
	in = bytes.TrimPrefix(in, bom)
	var typ, data, idBuf []byte
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			return v // a cut line and a cut block are discarded
		}
		line := in[:i]
		n := i + 1
		if in[i] == '\r' && n < len(in) && in[n] == '\n' {
			n++
		}
		in = in[n:]
		if len(line) == 0 {
			v.LastID = string(idBuf)
			if len(data) > 0 {
				t := "message"
				if len(typ) > 0 {
					t = string(typ)
				}
				d := data[:len(data)-1]
				v.Msgs = append(v.Msgs, msg{Type: t, Data: string(d), LastID: v.LastID, Retry: v.Retry})
			}
			typ, data = nil, nil
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			name, value = line[:c], line[c+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(name) {
		case "event":
			typ = append([]byte(nil), value...)
		case "data":
			data = append(append(data, value...), '\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				idBuf = append([]byte(nil), value...)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 63); err == nil && isDigits(value) {
				v.Retry = int64(ms)
			} else if isDigits(value) && len(value) > 0 {
				v.Retry = 1<<63 - 1
			}
		}
	}
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
