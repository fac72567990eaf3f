package forward

import (
	"log/slog"
	"net/url"

	"github.com/frayproxy/fray/proxy/mcp"
	"github.com/frayproxy/fray/proxy/sse"
)

// rewriteEndpoint turns the URL of a legacy (2024-11-05) `endpoint` event
// into one that points at fray, so that the client's POSTs come back through
// the proxy, and learns the paths and the session of the legacy stream. The
// URL keeps its form: a relative one stays relative (root-relative, so that
// it resolves the same against fray's URL), an absolute one names fray's
// host as the client reached it.
func (pm *pump) rewriteEndpoint(e *sse.Event) {
	p, ex := pm.p, pm.ex
	raw := string(e.Data)
	target, err := pm.resp.Request.URL.Parse(raw)
	if err != nil {
		p.log.Warn("legacy endpoint event has an unparseable URL; left as is", "endpoint", redactQuery(raw), "error", withoutURL(err))
		return
	}
	if target.Scheme != p.upstream.Scheme || target.Host != p.upstream.Host {
		p.log.Warn("legacy endpoint points away from the upstream; the client's POSTs will bypass fray", "endpoint", redactQuery(raw))
		return
	}
	cp, ok := p.clientPath(target.Path)
	if !ok {
		p.log.Warn("legacy endpoint lies outside the upstream's base path; the client's POSTs will bypass fray",
			"endpoint", redactQuery(raw), "base", p.upstream.Path)
		return
	}
	p.legacy.addSSE(pm.r.URL.Path)
	p.legacy.addMessages(cp)
	rel := url.URL{Path: cp, RawQuery: target.RawQuery}
	out := rel.String()
	if u, err := url.Parse(raw); err == nil && u.IsAbs() {
		scheme := "http"
		if pm.r.TLS != nil {
			scheme = "https"
		}
		abs := url.URL{Scheme: scheme, Host: pm.r.Host, Path: cp, RawQuery: target.RawQuery}
		out = abs.String()
	}
	e.SetField("data", []byte(out))
	ex.Stream = mcp.StreamLegacy
	if sid := legacySessionID(target.Query()); sid != "" {
		ex.Session = sid
		ex.SessionSeq, ex.StreamSeq, _ = p.sessions.touch(sid, mcp.StreamLegacy)
	}
	p.log.LogAttrs(pm.r.Context(), slog.LevelDebug, "legacy endpoint rewritten",
		append(ex.logAttrs(), slog.String("from", raw), slog.String("to", out))...)
}
