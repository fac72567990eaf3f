package verify

import "github.com/frayproxy/fray/proxy/checks"

// checkID indexes the checks the verifier applies, in the catalog's order.
// Each constant's comment says how the verifier applies its check: where
// the negotiated protocol revision makes it hold, and how every fault kind
// fray injects is kept from being blamed on a peer. Fault kinds a comment
// does not name (delay, latency, throttle, fragment, keepalive-noise, a
// stall with a duration) only move things in time and bear on no check but
// the timing ones, which measure from what the client saw.
type checkID int

const (
	// cPriming, server.priming-event (warning): each SSE stream the server starts
	// in answer to a POST begins with a priming event, an event with an id
	// and empty data (SEP-1699). Applied for 2025-11-25 <= revision <
	// 2026-07-28, the revision taken from the POST as the client sent it,
	// so the initialize POST, sent before any revision is agreed, is not
	// judged. It judges what the upstream sent (the first event block that
	// carries an id, data or a type), so drop-priming, strip-id and
	// rewrite-id, which change only what the client got, are never held
	// against the server. A stream that ends before its first event is
	// judged only when the upstream ended it cleanly; a close or reset at
	// the start of the stream, a client that left and an upstream that
	// failed leave it unjudged. A block passed through unparsed (past
	// --max-block) is not judged. Resumptions (a GET carrying
	// Last-Event-ID as forwarded, whatever the client sent) owe none.
	cPriming checkID = iota
	// cPrimingGet, server.priming-event-get (warning): a standalone GET
	// stream (a GET forwarded without Last-Event-ID) that the server ends
	// itself must have given the client an id to resume from first: the
	// published text owes a priming event on POST streams only, and asks a
	// server that closes the GET stream to let the client reconnect. A
	// stream fray or the client ended, or that ended after the client's
	// DELETE, is not judged. A GET whose Last-Event-ID a
	// strip-last-event-id fault removed is a standalone GET to the server,
	// and judged as one.
	cPrimingGet
	// cRetryBeforeClose, server.retry-before-close (warning): a server that ends a stream
	// cleanly before it has sent the response to the POST's request sends
	// a retry field on that stream first. Applied for 2025-11-25 <=
	// revision < 2026-07-28 to POST streams and their resumptions when the
	// End cause is Complete (the upstream ended it). close, lose, reset and
	// a timed close end streams with a fault cause and are never judged;
	// strip-retry and set-retry change what the client got, while the
	// check reads the upstream's own retry field.
	cRetryBeforeClose
	// cIDsUnique, server.event-ids-unique (error): event ids are unique across all
	// streams of a session. Applied for 2025-03-26 <= revision < 2026-07-28
	// to every event id the upstream sent (never what a rewrite-id or
	// strip-id fault made of it). A replay on a resumption stream, the
	// same id with the same data, legitimately repeats an id: it is
	// judged by the replay checks instead. Ids are remembered in a bounded
	// window per session (idWindow), so a reuse of an id older than that is
	// not seen.
	cIDsUnique
	// cReplayComplete, server.replay-complete (warning): after a resumption from id X (the
	// Last-Event-ID fray forwarded), every event with data and an id that
	// the server had sent after X on that logical stream (the stream X
	// belongs to and its chain of resumptions), those a drop, lose or cut
	// kept from the client included, is sent again before anything new.
	// Applied for 2025-03-26 <= revision < 2026-07-28, and judged once the
	// resumption stream sends its first event that is neither a replay nor
	// a priming event, or the upstream ends it cleanly, or, for the
	// standalone GET stream, the client leaves it (or its session) after
	// a second with no such event (what the server had stored is not coming: its later
	// notifications would end the replay). Any other resumption that
	// fray (close, lose, reset, stall) or the client cut before that, or
	// that the upstream broke off, is not judged. When X is an id the
	// server never sent (a rewrite-last-event-id or rewrite-id fault, or a
	// stale client id) the replay is not judged; when a strip-last-event-id
	// fault removed X, the server saw a standalone GET and owes no replay.
	cReplayComplete
	// cReplayNoDup, server.replay-no-duplicates (warning): a resumption from X sends
	// nothing at or before X again, and no event twice. It reads the
	// upstream's events, so a duplicate fault (copies fray wrote) is never
	// counted; X is what fray forwarded, so a rewrite-last-event-id fault
	// that points X backwards makes the server right to replay more.
	cReplayNoDup
	// cReplayIsolated, server.replay-isolated (error): a resumption replays nothing that
	// belongs to another stream of the session or to another session: an
	// event whose id and data match one the upstream sent elsewhere.
	// Applied for 2025-03-26 <= revision < 2026-07-28, and judged even when
	// a rewrite-last-event-id fault made X up (say, another session's id):
	// whatever id it is given, a server never leaks another stream's
	// events. Other sessions' events are recognised only while they are in
	// the ledger's bounded windows, and only in the replay part of the
	// stream (before its first new event), so that two sessions that
	// number their events alike are not taken for a leak. Once the
	// session's server used an id again (server.event-ids-unique), an
	// event under another stream's id with other data is taken for the
	// stream's own: one cause, judged by event-ids-unique alone.
	cReplayIsolated
	// cResumeContinues, server.resume-continues (error): see silence.go.
	cResumeContinues
	// cDisconnectNotCancel, server.disconnect-not-cancel (warning): see judgeCancelled.
	cDisconnectNotCancel
	// cOwnStream, server.messages-on-own-stream (warning): see judgeOwnStream.
	cOwnStream
	// cUnknownSession, server.unknown-session-404 (error; a warning for an id never issued): a request carrying an
	// Mcp-Session-Id the server never issued (never seen in a response's
	// Mcp-Session-Id from the upstream), or one it deleted (a DELETE it
	// answered 2xx), is answered 404. Only responses from the upstream are
	// judged: a status fault, a drop-request and fray's own 502 are not
	// the server's answers. A request whose Mcp-Session-Id a strip-header
	// fault removed is not judged, nor legacy (2024-11-05) traffic, nor
	// revisions from 2026-07-28. "Never issued" is known only while the
	// bounded set of issued ids (maxSessionMeta) has not overflowed, and
	// only for sessions that began while fray watched: a client connected
	// before fray started sends an id fray never saw issued, and a server
	// that rightly accepts it is reported.
	cUnknownSession
	// cReconnects, client.reconnects (warning): after the answer stream of a POST ends
	// before the response reached the client (a close, lose or reset fault,
	// or the server ending or breaking it) while the client held an event
	// id for it, the client comes back: a GET for that stream (Streamable
	// HTTP, 2025-03-26 <= revision < 2026-07-28), or, for the legacy
	// transport, a new GET on the SSE path after its stream ended with
	// requests unanswered. Not judged when no id was delivered on that
	// logical stream (the server sent none, a drop-priming or strip-id
	// fault kept them all back, or an empty id reset it), when the session
	// was deleted or answered 404, when the client closed the stream
	// itself, or when it came back and server.replay-complete found the
	// replay incomplete (the server is the cause). A reconnection attempt that fails (a status fault, a 5xx, a
	// reset) leaves the client owing another, until it has made two failed
	// attempts in a row: the smallest retry budget of the official SDKs.
	// Judged AnswerDeadline plus the delivered retry after the end, or by
	// Final once twice the retry plus one second has passed. A GET without
	// Last-Event-ID that came back in time is judged by
	// client.last-event-id instead.
	cReconnects
	// cLastEventID, client.last-event-id (warning): the Last-Event-ID a client sends (not
	// what fray forwarded) is the last id fray delivered on that logical
	// stream, under WHATWG rules: an id-only event counts, an empty id
	// resets it, an event fray dropped, lost, cut or never wrote does not
	// count, and an id a rewrite-id fault wrote is the id the client got,
	// so it is the one expected. A GET without Last-Event-ID that is the
	// reconnection for a stream with a delivered id is a finding here:
	// at once when the client already had a standalone GET open or was
	// resuming that stream (so the GET cannot be the standalone stream's
	// first open), otherwise once the stream's reconnection deadline
	// passes without a proper resumption. A stream with a block passed
	// through unparsed is not judged: fray cannot tell which id it set.
	cLastEventID
	// cRetryHonoured, client.retry-honoured (error): a client waits at least the last
	// retry delivered on a stream (less 50 ms of tolerance), counted from
	// the stream's end or the failure of its last attempt, before it
	// reconnects. Waiting longer is no finding: the text sets a minimum,
	// and a client's own backoff may exceed it. A retry set by a set-retry fault is what the client was told, so it is
	// owed; one removed by strip-retry was never delivered and owes
	// nothing (client.backoff applies). Applied to Streamable HTTP at
	// revisions with resumability.
	cRetryHonoured
	// cBackoff, client.backoff (warning): without a delivered retry, repeated
	// failures meet growing delays, not a storm. The bound: three
	// consecutive reconnection attempts for one stream, each begun less
	// than 100 ms after the previous failure (the stream's end before its
	// response, a failed attempt's end: a status fault, a 5xx, a reset, a
	// resumption cut again), are a storm; one finding per storm. The
	// failures are often fray's doing (status, reset, close); the storm is
	// the client's answer to them, which is what is judged. From
	// 2026-07-28 on, re-issues of a call whose stream broke are judged
	// the same way (judgeReissueBackoff).
	cBackoff
	// cRetriesTransient, client.retries-transient (warning): see judgeGone.
	cRetriesTransient
	// cNewSession, client.new-session-after-404 (error): after a 404 to a request that
	// carried its session (from the upstream or a status fault: either
	// way the client was told its session is gone), the client initializes
	// again, does not send the dead session id in requests it starts after
	// the 404 (a DELETE of it excepted), and does not carry the old
	// session's Last-Event-ID into the new one. Legacy traffic is not
	// judged. The initialize is owed within AnswerDeadline, or by Final
	// one second after the 404.
	cNewSession
	// cAnswered, e2e.every-request-answered (error): every client JSON-RPC request
	// that was forwarded gets a response delivered to the client (in a
	// JSON body, or an SSE event written whole and uncorrupted on any
	// stream of its session) within AnswerDeadline of its session's last
	// activity. Excused: requests fray answered itself (status,
	// drop-request), requests answered with an HTTP error status, requests
	// the client cancelled (notifications/cancelled), requests of a
	// session that was deleted, answered 404 or (legacy) lost its stream,
	// requests whose exchange the client left, and requests whose response
	// no conforming pair could recover from a fault (the reasons of
	// e2e.no-message-lost, plus: a cut stream that delivered no id, a
	// Last-Event-ID fray changed, an id fray rewrote, reconnections fray
	// refused twice). The end-to-end checks report what no other check
	// explains: a request left unanswered because a check already blamed
	// one end for its stream (client.reconnects, client.last-event-id,
	// server.replay-complete, server.priming-event) is excused as
	// "explained by" that check, so that one cause fails one check.
	cAnswered
	// cNoLost, e2e.no-message-lost (warning): every JSON-RPC message the server sent
	// reaches the client whole, at first or through a replay, except what
	// no conforming pair could recover, each counted with its reason:
	// dropped mid-stream while later ids were delivered (or dropped with
	// nothing to make the client resume), no id delivered to resume from,
	// legacy transport, protocol without resumability, corrupted by fray,
	// stalled for ever by fray, the client closed the stream, the session
	// ended, Last-Event-ID changed by fray, resumed from an id fray
	// rewrote, reconnection refused by fray; and, as for
	// e2e.every-request-answered, a loss another check already blamed on
	// one end ("explained by" it).
	cNoLost
	// cNoDup, e2e.no-message-duplicated (error): no JSON-RPC response reaches the
	// client more often than its request was forwarded. Extra copies a
	// duplicate fault wrote are counted apart, and so are replays on a
	// resumption whose Last-Event-ID fray changed, and copies a server
	// replayed from at or before Last-Event-ID (explained by
	// server.replay-no-duplicates).
	cNoDup
	// The checks of 2026-07-28 (stateless*.go), applied only to requests
	// whose revision (Mcp-Protocol-Version, else the revision their _meta
	// names) is 2026-07-28 or later; the checks above that rest on
	// sessions, event ids or resumption excuse those requests.
	//
	// cReissue, client.reissues-cut-request (error): see judgeReissue.
	cReissue
	// cListensAgain, client.listens-again (warning): see owedListen.
	cListensAgain
	// cRoutingHeaders, client.routing-headers (error): see judgeRouting.
	cRoutingHeaders
	// cSilentAfterCancel, server.silent-after-cancel (error): see
	// noteCancelled and judgeAfterCancel.
	cSilentAfterCancel
	// cListenAck, server.listen-acknowledged (error): see judgeListenAck.
	cListenAck
	// cHeaderMismatch, server.header-mismatch-rejected (error): see
	// judgeMismatchAnswer.
	cHeaderMismatch
	// cTaskPoll, client.task-poll-interval (warning): see judgeTaskPoll.
	cTaskPoll
	// cAccelBuffering, server.x-accel-buffering (warning): see
	// judgeAccelBuffering.
	cAccelBuffering
	// cUnsupportedVersion, server.unsupported-version-error (error): see
	// judgeVersionRefusal.
	cUnsupportedVersion
	// cGetAnswer, server.get-stream-or-405 (error): see judgeGetAnswer.
	cGetAnswer
	// cSurvivesRefusal, server.session-survives-refusal (warning): see
	// judgeAfterRefusal.
	cSurvivesRefusal
	// cResumeLoop, client.resume-loop (warning): see judgeLoop.
	cResumeLoop
	// cSurvivesGetFailure, client.survives-get-failure (warning): see
	// getFailed and judgeLeftAfterGet.
	cSurvivesGetFailure
	numChecks
)

// catalog holds each check's id, default severity and summary, by
// checkID; the checks package's catalog order is the verifier's.
var catalog = func() (out [numChecks]checks.Info) {
	ids := [numChecks]string{
		cPriming: checks.ServerPrimingEvent, cPrimingGet: checks.ServerPrimingEventGet,
		cRetryBeforeClose: checks.ServerRetryBeforeClose, cIDsUnique: checks.ServerEventIDsUnique,
		cReplayComplete: checks.ServerReplayComplete, cReplayNoDup: checks.ServerReplayNoDuplicates,
		cReplayIsolated: checks.ServerReplayIsolated, cResumeContinues: checks.ServerResumeContinues,
		cDisconnectNotCancel: checks.ServerDisconnectNotCancel, cOwnStream: checks.ServerMessagesOnOwnStream,
		cUnknownSession: checks.ServerUnknownSession404,
		cReconnects:     checks.ClientReconnects, cLastEventID: checks.ClientLastEventID,
		cRetryHonoured: checks.ClientRetryHonoured, cBackoff: checks.ClientBackoff, cRetriesTransient: checks.ClientRetriesTransient,
		cNewSession: checks.ClientNewSessionAfter404, cAnswered: checks.E2EEveryRequestAnswered,
		cNoLost: checks.E2ENoMessageLost, cNoDup: checks.E2ENoMessageDuplicated,
		cReissue: checks.ClientReissuesCutRequest, cListensAgain: checks.ClientListensAgain,
		cRoutingHeaders: checks.ClientRoutingHeaders, cSilentAfterCancel: checks.ServerSilentAfterCancel,
		cListenAck: checks.ServerListenAcknowledged, cHeaderMismatch: checks.ServerHeaderMismatchRejected,
		cTaskPoll: checks.ClientTaskPollInterval, cAccelBuffering: checks.ServerAccelBuffering,
		cUnsupportedVersion: checks.ServerUnsupportedVersion, cGetAnswer: checks.ServerGetStreamOr405,
		cSurvivesRefusal: checks.ServerSessionSurvivesRefusal, cResumeLoop: checks.ClientResumeLoop,
		cSurvivesGetFailure: checks.ClientSurvivesGetFailure,
	}
	all := checks.Catalog()
	if len(all) != len(ids) {
		panic("verify: the checks catalog and the verifier's checks differ")
	}
	for i, id := range ids {
		if all[i].ID != id {
			panic("verify: check " + id + " is out of the catalog's order")
		}
		out[i] = all[i]
	}
	return out
}()
