// Package sse reads and writes text/event-stream bodies the way a conforming
// (WHATWG) client parses them, one event block at a time, keeping every byte.
//
// The pipeline inside fray is
//
//	upstream body -> Reader.Next -> *Event (raw bytes + fields + client view) -> Event.AppendTo -> client
//
// An Event that nobody modified is written back byte for byte. An Event whose
// fields were removed or changed is written in a canonical form that keeps the
// block's line-end style. Memory per stream is bounded by the Reader's maximum
// block size; past it the rest of the stream is passed on raw, unparsed.
package sse

// DefaultMaxBlock is the largest event block, in bytes, that a Reader parses
// when no other limit is given.
const DefaultMaxBlock = 1 << 20

// Line is one line of an event block, without its line end in Name and Value.
// Raw holds the whole line as read, line end included.
type Line struct {
	// Name is the field name: everything before the first colon, or the
	// whole line when there is no colon. Empty for a comment.
	Name []byte
	// Value is the field value with one leading space removed, or the
	// comment text after the colon for a comment.
	Value []byte
	// Raw is the line exactly as it was read, line end included. It is nil
	// for a line added by Event.SetField, which AppendTo writes in canonical
	// form.
	Raw []byte
	// Comment reports whether the line started with a colon.
	Comment bool
}

// Event is one block of an event stream: the lines up to and including the
// empty line that ends it, and what a conforming client makes of them.
//
// The byte slices of an Event returned by Reader.Next point into the
// Reader's buffer and are valid only until the next call to Next. An Event is
// not safe for concurrent use. The zero Event is an empty block that is not
// Complete; AppendTo writes nothing for it.
type Event struct {
	// Raw is the block exactly as read: its lines, the empty line that ended
	// it and, for the first block of a stream, a leading UTF-8 BOM. When the
	// previous block ended in a CR at the end of a read and the next read
	// began with an LF, that LF is the first byte of this Raw (see Reader).
	Raw []byte
	// Lines are the block's lines in order, the ending empty line excluded.
	// A trailing block cut by the end of the stream ends with the cut line,
	// whose Raw has no line end; a client ignores that line. RemoveField and
	// SetField edit Lines in place.
	Lines []Line

	// Type is the value of the last "event" field; empty means "message".
	Type []byte
	// Data is the data buffer as dispatched: data values joined by LF, the
	// final LF removed. Nil when the block has no data line; empty, not nil,
	// when its data lines join to the empty string.
	Data []byte
	// ID is the value of the last "id" field that had no NUL in it.
	ID []byte
	// HasID reports whether the block set the last event id (possibly to
	// the empty string, which resets it). The last event id is a property
	// of the stream: a client keeps it across blocks and commits it only for
	// a Complete block.
	HasID bool
	// Retry is the reconnection time in milliseconds set by the last valid
	// "retry" field; meaningful only when HasRetry.
	Retry int64
	// HasRetry reports whether a valid (ASCII digits only) retry field was
	// read. A client applies retry as soon as it reads the line, so this
	// holds for a block that is not Complete too. A value too large for
	// int64 is read as math.MaxInt64.
	HasRetry bool
	// Dispatched reports whether a conforming client fires an event for this
	// block: it had at least one data line and was complete.
	Dispatched bool
	// Complete reports whether the block was ended by an empty line. A
	// trailing block cut by the end of the stream is not complete: a client
	// discards it and does not commit its id.
	Complete bool
	// Unparsed reports that these bytes were passed through without parsing
	// because the stream exceeded the Reader's maximum block size. Once one
	// Unparsed event is returned, every later one is Unparsed too. An
	// Unparsed event has no Lines and no client view, and is never
	// Complete; the mutating methods leave it alone.
	Unparsed bool
	// BOM reports that Raw starts with the stream's UTF-8 byte order mark.
	BOM bool

	// modified is set by the mutating methods; AppendTo then writes the
	// canonical form instead of Raw.
	modified bool
	// prefix is how many bytes of Raw come before the first line: the
	// stream's BOM, or an LF that completes the CR ending the previous block.
	prefix int
	// term is where the terminating empty line starts in Raw; len(Raw) when
	// the block is not complete.
	term int
	// eol is the block's line-end style, used for lines written canonically.
	eol eolStyle
	// edit holds the names and values of the lines added by SetField;
	// reused across events.
	edit []byte
	// scratch backs Data when it had to be joined from several lines;
	// reused across events.
	scratch []byte
}

// Priming reports whether the event is a priming event in the sense of
// SEP-1699: a complete block that sets a non-empty id and carries empty data
// (no data line, or data lines that join to the empty string).
func (e *Event) Priming() bool {
	return e.Complete && e.HasID && len(e.ID) > 0 && len(e.Data) == 0
}

// Modified reports whether a mutating method changed the event, so that
// AppendTo writes the canonical form rather than Raw.
func (e *Event) Modified() bool { return e.modified }

// Prefix is how many bytes of Raw come before the block's first line: the
// stream's UTF-8 BOM, or the LF that completes the previous block's CR.
// Bytes fray inserts between blocks go after them.
func (e *Event) Prefix() int { return e.prefix }

// CR reports whether the block's lines end in a bare CR, and CRLF whether
// they end in CR LF (neither: LF). This is the style of its lines, which a
// block dispatched at a CR whose LF has not yet come does not show in its
// last bytes.
func (e *Event) CR() bool { return e.eol == eolCR }

// CRLF: see CR.
func (e *Event) CRLF() bool { return e.eol == eolCRLF }
