package checks

// The check ids. How the verifier applies each, and how it keeps every
// fault fray injects from being blamed on a peer, is written in package
// verify and in docs/checks.md.
const (
	ServerPrimingEvent       = "server.priming-event"
	ServerPrimingEventGet    = "server.priming-event-get"
	ServerRetryBeforeClose   = "server.retry-before-close"
	ServerEventIDsUnique     = "server.event-ids-unique"
	ServerReplayComplete     = "server.replay-complete"
	ServerReplayNoDuplicates = "server.replay-no-duplicates"
	ServerReplayIsolated     = "server.replay-isolated"
	ServerUnknownSession404  = "server.unknown-session-404"
	ClientReconnects         = "client.reconnects"
	ClientLastEventID        = "client.last-event-id"
	ClientRetryHonoured      = "client.retry-honoured"
	ClientBackoff            = "client.backoff"
	ClientNewSessionAfter404 = "client.new-session-after-404"
	E2EEveryRequestAnswered  = "e2e.every-request-answered"
	E2ENoMessageLost         = "e2e.no-message-lost"
	E2ENoMessageDuplicated   = "e2e.no-message-duplicated"
)

// Where the rules stand.
const (
	srcSending   = "2025-11-25 transports, Sending Messages to the Server, 6"
	srcListening = "2025-11-25 transports, Listening for Messages from the Server, 4"
	srcResume    = "2025-11-25 transports, Resumability and Redelivery"
	srcSession   = "2025-11-25 transports, Session Management"
	srcMultiple  = "2025-11-25 transports, Multiple Connections, 2"
	srcJSONRPC   = "JSON-RPC 2.0, 5 (Response object)"
)

var catalog = []Info{
	{ServerPrimingEvent, Error, "Each SSE stream the server starts in answer to a POST begins with an event that has an id and empty data.",
		"The server SHOULD immediately send an SSE event consisting of an event ID and an empty data field in order to prime the client to reconnect.", srcSending},
	{ServerPrimingEventGet, Warning, "The standalone GET stream begins with an event that has an id and empty data.",
		"If the server closes the connection without terminating the stream, it SHOULD follow the same polling behavior as described for POST requests.", srcListening},
	{ServerRetryBeforeClose, Warning, "A server that ends a stream before the response sends retry on it first.",
		"If the server does close the connection prior to terminating the SSE stream, it SHOULD send an SSE event with a standard retry field before closing the connection.", srcSending},
	{ServerEventIDsUnique, Error, "Event ids are unique across all streams of a session.",
		"If present, the ID MUST be globally unique across all streams within that session.", srcResume},
	{ServerReplayComplete, Error, "A resumption replays every event with data the server sent after Last-Event-ID on that stream.",
		"The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected, and to resume the stream from that point.", srcResume},
	{ServerReplayNoDuplicates, Error, "A resumption sends nothing at or before Last-Event-ID again, and no event twice.",
		"The server MAY use this header to replay messages that would have been sent after the last event ID.", srcResume},
	{ServerReplayIsolated, Error, "A resumption replays nothing from another stream or session.",
		"The server MUST NOT replay messages that would have been delivered on a different stream.", srcResume},
	{ServerUnknownSession404, Error, "A request with a session id the server never issued, or deleted, is answered 404.",
		"The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found.", srcSession},
	{ClientReconnects, Error, "A client whose stream ended before the response, holding an event id, comes back for it.",
		"The client SHOULD then \"poll\" the SSE stream by attempting to reconnect.", srcSending},
	{ClientLastEventID, Error, "A client resumes with the last event id delivered on that stream.",
		"It SHOULD issue an HTTP GET to the MCP endpoint, and include the Last-Event-ID header to indicate the last event ID it received.", srcResume},
	{ClientRetryHonoured, Error, "A client waits at least the retry it was given before it reconnects.",
		"The client MUST respect the retry field, waiting the given number of milliseconds before attempting to reconnect.", srcSending},
	{ClientBackoff, Warning, "Without a retry, a client meets repeated failures with growing delays, not a storm.",
		"No published rule: a storm of reconnections is fray's own measure of a client that does not back off.", "fray"},
	{ClientNewSessionAfter404, Error, "After a 404 for its session, a client starts a new session and leaves the old one's id behind.",
		"When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached.", srcSession},
	{E2EEveryRequestAnswered, Error, "Every forwarded request gets its response delivered to the client.",
		"When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.", srcJSONRPC},
	{E2ENoMessageLost, Error, "Every message the server sent reaches the client, unless no conforming pair could recover it.",
		"To avoid message loss due to disconnection, the server MAY make the stream resumable.", srcSending},
	{E2ENoMessageDuplicated, Error, "No response reaches the client twice, except copies fray's duplicate fault made.",
		"The server MUST send each of its JSON-RPC messages on only one of the connected streams; that is, it MUST NOT broadcast the same message across multiple streams.", srcMultiple},
}
