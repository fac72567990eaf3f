package scripted

// ReusedIDs numbers each stream's events from 1, as a server that keeps a
// counter per stream does, so that every stream of a session uses again
// the ids of the ones before (server.event-ids-unique). A resumption goes
// on the latest stream that sent the id. It continues the ServerFault
// values of server.go and standalone.go.
const ReusedIDs ServerFault = 40
