package forward

import "net/http"

// HeadTimeout lets tests of the head-arrival limit shorten it.
var HeadTimeout = &headTimeout

// OwnTransport is the transport fray built for p (Options.Transport nil),
// for tests that configure it as a user's environment would.
func OwnTransport(p *Proxy) *http.Transport { return p.conns.t }
