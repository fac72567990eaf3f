package faults

import "net/http"

// stripHeaderKind removes one header from matching exchanges: from the
// forwarded request (direction = "request") or from the response to the
// client (direction = "response", the default).
var stripHeaderKind = kindDef{
	name: "strip-header", target: onExchange, params: []string{"header", "direction"},
	summary: "removes a header from the forwarded request or from the response",
	build: func(a *args) any {
		a.require("header", "a header name such as \"Mcp-Session-Id\"")
		name := a.str("header", "")
		if a.has("header") && !isToken(name) {
			a.fail("header", ErrRange, "%q is not a valid header name", name)
		}
		e := stripHeaderEffect{name: http.CanonicalHeaderKey(name)}
		switch dir := a.str("direction", "response"); dir {
		case "response":
		case "request":
			e.request = true
		default:
			a.fail("direction", ErrRange, "%q is not \"request\" or \"response\"", dir)
		}
		return e
	},
}

type stripHeaderEffect struct {
	name    string
	request bool
}

func (stripHeaderEffect) applies(*Exchange) bool { return true }

func (s stripHeaderEffect) exchange(_ *Exchange, _ *rng, a *ExchangeAction) {
	if s.request {
		a.StripRequestHeaders = append(a.StripRequestHeaders, s.name)
	} else {
		a.StripResponseHeaders = append(a.StripResponseHeaders, s.name)
	}
}
