package forward

import (
	"log/slog"
	"net/http"
	"strings"
)

// noteDoubledPath warns, once per proxy, when a client path already
// begins with the upstream's base path: with base /mcp, a client's /mcp
// goes to /mcp/mcp, which is rarely what was meant (the client was given
// the server's endpoint URL, fray the same URL as its base).
func (p *Proxy) noteDoubledPath(r *http.Request, ex *exchange) {
	base := strings.TrimSuffix(p.upstream.Path, "/")
	if base == "" || !(r.URL.Path == base || strings.HasPrefix(r.URL.Path, base+"/")) ||
		!p.doubledWarned.CompareAndSwap(false, true) {
		return
	}
	p.log.LogAttrs(r.Context(), slog.LevelWarn,
		"the client's path already begins with the upstream's base path, which fray puts in front of it; point the client at fray's / or give the upstream without the path",
		append(ex.logAttrs(), slog.String("client_path", r.URL.Path), slog.String("upstream", p.upstream.String()),
			slog.String("forwarded_path", p.upstream.Path+r.URL.Path))...)
}

// noteUpstreamError logs at info, once per proxy, the URL fray requested
// when the upstream first answers 4xx or 5xx: the answer alone does not
// say whether fray was pointed at the wrong path.
func (p *Proxy) noteUpstreamError(r *http.Request, ex *exchange, resp *http.Response) {
	if resp.StatusCode < 400 || resp.Request == nil || !p.errorNoted.CompareAndSwap(false, true) {
		return
	}
	p.log.LogAttrs(r.Context(), slog.LevelInfo, "the upstream answered with an error status (first time; later ones are not logged at info)",
		append(ex.logAttrs(), slog.Int("status", resp.StatusCode), slog.String("requested", redactQuery(resp.Request.URL.String())))...)
}
