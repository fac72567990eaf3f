package faults

import "github.com/frayproxy/fray/proxy/mcp"

// stripHeaderKind removes one header from matching exchanges: from the
// forwarded request (direction = "request") or from the response to the
// client (direction = "response", the default).
var stripHeaderKind = Kind{
	Name: "strip-header", On: OnExchange, Params: []string{"header", "direction"},
	Summary: "removes a header from the forwarded request or from the response",
	Traits:  StripsHeaders,
	Build: func(a *Args) Effect {
		a.Require("header", "a header name such as \"Mcp-Session-Id\"")
		e := stripHeaderEffect{name: readHeaderName(a)}
		switch dir := a.String("direction", "response"); dir {
		case "response":
		case "request":
			e.request = true
		default:
			a.Fail("direction", ErrRange, "%q is not \"request\" or \"response\"", dir)
		}
		return Effect{Exchange: e}
	},
}

type stripHeaderEffect struct {
	name    string
	request bool
}

func (stripHeaderEffect) Applies(*mcp.Exchange) bool { return true }

func (s stripHeaderEffect) Exchange(_ *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	if s.request {
		a.StripRequestHeaders = append(a.StripRequestHeaders, s.name)
	} else {
		a.StripResponseHeaders = append(a.StripResponseHeaders, s.name)
	}
}
