package faults

import (
	"strings"

	"github.com/frayproxy/fray/proxy/mcp"
)

// rewriteHeaderKind sets one header of the forwarded request to a value
// of the profile's choosing, so that the server sees a request whose
// header says something else than what the client sent: an Mcp-Method or
// Mcp-Name that disagrees with the body (2026-07-28), which the server
// must answer 400 with JSON-RPC error -32020.
//
//	client --Mcp-Name: add--> fray --Mcp-Name: fray-mismatch--> server
var rewriteHeaderKind = Kind{
	Name: "rewrite-header", On: OnExchange, Params: []string{"header", "value"},
	Summary: "sets a header of the forwarded request to another value",
	Traits:  StripsHeaders,
	Build: func(a *Args) Effect {
		a.Require("header", "a header name such as \"Mcp-Name\"")
		a.Require("value", "the value the server gets, such as \"fray-mismatch\"")
		name := readHeaderName(a)
		value := a.String("value", "")
		if strings.ContainsAny(value, "\r\n\x00") {
			a.Fail("value", ErrRange, "%q holds a line break or NUL, which no header value may", value)
		}
		return Effect{Exchange: rewriteHeaderEffect{set: HeaderSet{Name: name, Value: value}}}
	},
}

type rewriteHeaderEffect struct{ set HeaderSet }

// Applies is true only for a request with a body to route: a POST of
// JSON-RPC; a GET or a DELETE has no body for the header to disagree with.
func (rewriteHeaderEffect) Applies(ex *mcp.Exchange) bool { return ex.RPCKind != mcp.RPCNone }

func (r rewriteHeaderEffect) Exchange(_ *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	a.SetRequestHeaders = append(a.SetRequestHeaders, r.set)
}
