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
	cp, ok := clientPathUnder(p.upstream.Path, target.Path)
	if !ok {
		p.log.Warn("legacy endpoint lies outside the upstream's base path; the client's POSTs will bypass fray",
			"endpoint", redactQuery(raw), "base", p.upstream.Path)
		return
	}
	// The path keeps the form the server wrote it in: decoded, %2F would
	// become a slash, and "/%2F/evil.example/x" the authority of
	// "///evil.example/x" to a WHATWG parser.
	rawPath, _ := clientPathUnder(p.upstream.EscapedPath(), target.EscapedPath())
	rel := url.URL{Path: cp, RawPath: rawPath, RawQuery: target.RawQuery}
	out := rel.String()
	if u, err := url.Parse(raw); err == nil && u.IsAbs() {
		scheme := "http"
		if pm.r.TLS != nil {
			scheme = "https"
		}
		abs := url.URL{Scheme: scheme, Host: pm.r.Host, Path: cp, RawPath: rawPath, RawQuery: target.RawQuery}
		out = abs.String()
	} else if namesHost(out) {
		p.log.Warn("legacy endpoint, relative to fray, would name another host (it starts with //); left as is",
			"endpoint", redactQuery(raw), "base", p.upstream.Path)
		return
	}
	p.legacy.addSSE(pm.r.URL.Path)
	p.legacy.addMessages(cp)
	e.SetField("data", []byte(out))
	ex.Stream = mcp.StreamLegacy
	if sid := legacySessionID(target.Query()); sid != "" {
		ex.Session = sid
		ex.SessionSeq, ex.StreamSeq, _ = p.sessions.touch(sid, mcp.StreamLegacy)
	}
	p.log.LogAttrs(pm.r.Context(), slog.LevelDebug, "legacy endpoint rewritten",
		append(ex.logAttrs(), slog.String("from", raw), slog.String("to", out))...)
}

// namesHost reports whether a relative URL reference starts with an
// authority: two slashes, or a backslash in either place, which a WHATWG
// parser reads as a slash in an http URL.
func namesHost(ref string) bool {
	return len(ref) >= 2 && (ref[0] == '/' || ref[0] == '\\') && (ref[1] == '/' || ref[1] == '\\')
}
