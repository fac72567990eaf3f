package scripted

// Misbehaviours with event ids. They continue the ServerFault values of
// server.go and standalone.go, and the ClientFault values of client.go
// and bugs.go.
const (
	// ReusedIDs numbers each stream's events from 1, as a server that
	// keeps a counter per stream does, so that every stream of a session
	// uses again the ids of the ones before (server.event-ids-unique). A
	// resumption goes on the latest stream that sent the id.
	ReusedIDs ServerFault = 40
	// PreviousStreamID resumes a call's stream with the last id of the
	// previous call's stream, an id the stream it resumes never delivered
	// (client.last-event-id). The first call resumes as it should.
	PreviousStreamID ClientFault = 40
)
