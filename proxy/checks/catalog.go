package checks

// The check ids. How the verifier applies each, and how it keeps every
// fault fray injects from being blamed on a peer, is written in package
// verify and in docs/checks.md.
const (
	ServerPrimingEvent        = "server.priming-event"
	ServerPrimingEventGet     = "server.priming-event-get"
	ServerRetryBeforeClose    = "server.retry-before-close"
	ServerEventIDsUnique      = "server.event-ids-unique"
	ServerReplayComplete      = "server.replay-complete"
	ServerReplayNoDuplicates  = "server.replay-no-duplicates"
	ServerReplayIsolated      = "server.replay-isolated"
	ServerResumeContinues     = "server.resume-continues"
	ServerDisconnectNotCancel = "server.disconnect-not-cancel"
	ServerMessagesOnOwnStream = "server.messages-on-own-stream"
	ServerUnknownSession404   = "server.unknown-session-404"
	ClientReconnects          = "client.reconnects"
	ClientLastEventID         = "client.last-event-id"
	ClientRetryHonoured       = "client.retry-honoured"
	ClientBackoff             = "client.backoff"
	ClientRetriesTransient    = "client.retries-transient"
	ClientNewSessionAfter404  = "client.new-session-after-404"
	E2EEveryRequestAnswered   = "e2e.every-request-answered"
	E2ENoMessageLost          = "e2e.no-message-lost"
	E2ENoMessageDuplicated    = "e2e.no-message-duplicated"

	// The checks of 2026-07-28, judged only on requests of that revision.
	ClientReissuesCutRequest     = "client.reissues-cut-request"
	ClientListensAgain           = "client.listens-again"
	ClientRoutingHeaders         = "client.routing-headers"
	ServerSilentAfterCancel      = "server.silent-after-cancel"
	ServerListenAcknowledged     = "server.listen-acknowledged"
	ServerHeaderMismatchRejected = "server.header-mismatch-rejected"
	ClientTaskPollInterval       = "client.task-poll-interval"
	ServerAccelBuffering         = "server.x-accel-buffering"
	ServerUnsupportedVersion     = "server.unsupported-version-error"
	ServerGetStreamOr405         = "server.get-stream-or-405"
	ServerSessionSurvivesRefusal = "server.session-survives-refusal"
	ClientResumeLoop             = "client.resume-loop"
	ClientSurvivesGetFailure     = "client.survives-get-failure"
)

// Where the rules stand.
const (
	srcSending   = "2025-11-25 transports, Sending Messages to the Server, 6"
	srcListening = "2025-11-25 transports, Listening for Messages from the Server, 4"
	srcGetAnswer = "2025-11-25 transports, Listening for Messages from the Server, 3"
	srcResume    = "2025-11-25 transports, Resumability and Redelivery"
	srcSession   = "2025-11-25 transports, Session Management"
	srcMultiple  = "2025-11-25 transports, Multiple Connections, 2"
	srcJSONRPC   = "JSON-RPC 2.0, 5, the Response object; MCP messages follow JSON-RPC 2.0"

	srcStatelessChange = "2026-07-28 changelog, Major changes, 9"
	srcCancel          = "2026-07-28 transports, Cancellation"
	srcListenAck       = "2026-07-28 subscriptions, Acknowledgment"
	srcListenClosure   = "2026-07-28 subscriptions, Graceful Closure"
	srcSendingNew      = "2026-07-28 transports, Sending Messages, 3"
	srcValidation      = "2026-07-28 transports, Server Validation"
	srcTasks           = "SEP-2663 tasks extension, Task Polling"
	srcReceiving       = "2026-07-28 transports, Receiving Messages"
	srcVersionHeader   = "2026-07-28 transports, Protocol Version Header"
)

// catalog holds every check. A severity follows the keyword of the quoted
// rule (TestSeverityFollowsTheRule holds it): MUST and MUST NOT are
// errors; SHOULD, SHOULD NOT and MAY are warnings, and so is a check no
// published sentence states.
var catalog = []Info{
	{ServerPrimingEvent, Warning,
		"Each SSE stream the server starts in answer to a POST begins with an event that has an id and empty data.",
		"The server SHOULD immediately send an SSE event consisting of an event ID and an empty data field in order to prime the client to reconnect.", srcSending},
	{ServerPrimingEventGet, Warning,
		"A standalone GET stream the server closes before it has sent any event id gave the client an id to resume from first.",
		"If the server closes the connection without terminating the stream, it SHOULD follow the same polling behavior as described for POST requests: sending a retry field and allowing the client to reconnect.", srcListening},
	{ServerRetryBeforeClose, Warning,
		"A server that ends a stream before the response sends retry on it first.",
		"If the server does close the connection prior to terminating the SSE stream, it SHOULD send an SSE event with a standard retry field before closing the connection.", srcSending},
	{ServerEventIDsUnique, Error,
		"Event ids are unique across all streams of a session.",
		"If present, the ID MUST be globally unique across all streams within that session.", srcResume},
	{ServerReplayComplete, Warning,
		"A resumption replays every event with data the server sent after Last-Event-ID on that stream.",
		"The server MAY use this header to replay messages that would have been sent after the last event ID, on the stream that was disconnected, and to resume the stream from that point.", srcResume},
	{ServerReplayNoDuplicates, Warning,
		"A resumption sends nothing at or before Last-Event-ID again, and no event twice.",
		"The server MAY use this header to replay messages that would have been sent after the last event ID.", srcResume},
	{ServerReplayIsolated, Error,
		"A resumption replays nothing from another stream or session.",
		"The server MUST NOT replay messages that would have been delivered on a different stream.", srcResume},
	{ServerResumeContinues, Error,
		"A resumed stream goes on to the request's response; it does not fall silent while the request is pending.",
		"When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.", srcJSONRPC},
	{ServerDisconnectNotCancel, Warning,
		"A cut stream does not cancel its request: only notifications/cancelled does.",
		"Disconnection SHOULD NOT be interpreted as the client cancelling its request.", srcSending},
	{ServerMessagesOnOwnStream, Warning,
		"A request's notifications travel on that request's stream, not on the standalone GET stream or another request's.",
		"These messages SHOULD be unrelated to any concurrently-running JSON-RPC request from the client.", srcListening},
	{ServerUnknownSession404, Error,
		"A request with a session id the server deleted is answered 404 (an id it never issued, a warning).",
		"The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found.", srcSession},
	{ClientReconnects, Warning,
		"A client whose stream ended before the response, holding an event id, comes back for it.",
		"The client SHOULD then \"poll\" the SSE stream by attempting to reconnect.", srcSending},
	{ClientLastEventID, Warning,
		"A client resumes with a GET that carries the last event id delivered on that stream.",
		"If the client wishes to resume after a disconnection, it SHOULD issue an HTTP GET to the MCP endpoint, and include the Last-Event-ID header to indicate the last event ID it received.", srcResume},
	{ClientRetryHonoured, Error,
		"A client waits at least the retry it was given before it reconnects.",
		"The client MUST respect the retry field, waiting the given number of milliseconds before attempting to reconnect.", srcSending},
	{ClientBackoff, Warning,
		"Without a retry, a client meets repeated failures with growing delays, not a storm.",
		"No published rule: a storm of reconnections is fray's own measure of a client that does not back off.", "fray"},
	{ClientRetriesTransient, Warning,
		"A client whose reconnection meets one transient error (a 5xx, 429 or reset) tries again rather than giving the stream up.",
		"If the client wishes to resume after a disconnection (whether due to network failure or server-initiated closure), it SHOULD issue an HTTP GET to the MCP endpoint.", srcResume},
	{ClientNewSessionAfter404, Error,
		"After a 404 for its session, a client starts a new session and leaves the old one's id behind.",
		"When a client receives HTTP 404 in response to a request containing an MCP-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached.", srcSession},
	{E2EEveryRequestAnswered, Error,
		"Every forwarded request gets its response delivered to the client.",
		"When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications.", srcJSONRPC},
	{E2ENoMessageLost, Warning,
		"Every message the server sent reaches the client, unless no conforming pair could recover it.",
		"To avoid message loss due to disconnection, the server MAY make the stream resumable.", srcSending},
	{E2ENoMessageDuplicated, Error,
		"No response reaches the client twice, except copies fray's duplicate fault made.",
		"The server MUST send each of its JSON-RPC messages on only one of the connected streams; that is, it MUST NOT broadcast the same message across multiple streams.", srcMultiple},
	{ClientReissuesCutRequest, Error,
		"A client whose call stream broke before the response re-issues the call as a new request with a new id.",
		"A broken response stream loses the in-flight request; clients MUST re-issue it as a new request with a new request ID.", srcStatelessChange},
	{ClientListensAgain, Warning,
		"A client whose subscriptions/listen stream ended without a response sends subscriptions/listen again.",
		"A client that receives this response knows the subscription closed cleanly; a transport that closes without it indicates an unexpected disconnect, which the client MAY treat as a trigger to reconnect.", srcListenClosure},
	{ClientRoutingHeaders, Error,
		"Every request carries Mcp-Method, and Mcp-Name where its method names a target, equal to its body.",
		"The client MUST include the request metadata headers on each POST request.", srcSendingNew},
	{ServerSilentAfterCancel, Error,
		"After a request's stream closed, the server sends nothing more for it, on any stream.",
		"The server SHOULD stop work on the cancelled request as soon as practical and MUST NOT send any further messages for it.", srcCancel},
	{ServerListenAcknowledged, Error,
		"Every subscriptions/listen stream begins with notifications/subscriptions/acknowledged.",
		"The server MUST send notifications/subscriptions/acknowledged as the first message carrying the subscription's ID in _meta under io.modelcontextprotocol/subscriptionId, and MUST NOT send any notification on the subscription before it.", srcListenAck},
	{ServerHeaderMismatchRejected, Error,
		"A request whose Mcp-Method or Mcp-Name disagrees with its body is answered 400 with JSON-RPC error -32020.",
		"When rejecting a request due to header validation failure, servers MUST return HTTP status 400 Bad Request and MUST include a JSON-RPC error response using the following error code:", srcValidation},
	{ClientTaskPollInterval, Warning,
		"A client polls a task with tasks/get no sooner than the pollIntervalMs it was last given after its previous poll.",
		"Clients SHOULD respect the pollIntervalMs provided in responses when determining polling frequency.", srcTasks},
	{ServerAccelBuffering, Warning,
		"Every SSE stream the server starts in answer to a request of 2026-07-28 carries X-Accel-Buffering: no.",
		"When initiating an SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP response.", srcReceiving},
	{ServerUnsupportedVersion, Error,
		"A request refused for its protocol version (JSON-RPC error -32022, UnsupportedProtocolVersionError) is answered 400 Bad Request.",
		"If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its supported versions.", srcVersionHeader},
	{ServerGetStreamOr405, Error,
		"A GET without Last-Event-ID that accepts text/event-stream is answered with an SSE stream or 405 Method Not Allowed, not refused otherwise (404 and transient statuses aside).",
		"The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this endpoint.", srcGetAnswer},
	{ServerSessionSurvivesRefusal, Warning,
		"After refusing one POST of a session (a 4xx), the server goes on serving the session: it does not answer the session's later POSTs 5xx.",
		"No published rule: a session that one refused message takes down is fray's own measure of a server that cannot fail one message alone.", "fray"},
	{ClientResumeLoop, Warning,
		"A client whose resumptions of one stream, from one Last-Event-ID, keep being answered with a stream that ends before any event waits longer each time, or stops: it does not loop at one pace.",
		"No published rule: a client that resumes for ever, at the pace of the retry it was given, a stream that keeps coming back empty is fray's own measure of a reconnection loop.", "fray"},
	{ClientSurvivesGetFailure, Warning,
		"After its standalone GET stream fails (a GET for it refused with an error status, 404 aside, or the stream ended), the client goes on with its calls: it does not leave the answer streams of requests in flight, nor delete its session under them.",
		"No published rule: the client MAY open the standalone stream, so a client that gives its calls up when that stream fails is fray's own measure of a client that cannot lose the stream alone.", "fray"},
}
