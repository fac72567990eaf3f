package faults

// registry holds every fault kind, one line each; a kind's file defines
// its Kind.
var registry = []*Kind{
	// On events of SSE streams from the server.
	&dropKind,
	&delayKind,
	&duplicateKind,
	&stripRetryKind,
	&setRetryKind,
	&stripIDKind,
	&rewriteIDKind,
	&dropPrimingKind,
	&corruptKind,
	// On whole streams.
	&closeKind,
	&loseKind,
	&resetKind,
	&stallKind,
	&throttleKind,
	&fragmentKind,
	&keepaliveNoiseKind,
	&idleCloseKind,
	&bufferKind,
	// On HTTP exchanges.
	&statusKind,
	&latencyKind,
	&dropRequestKind,
	&stripLastEventIDKind,
	&rewriteLastEventIDKind,
	&stripHeaderKind,
	&rewriteHeaderKind,
}
