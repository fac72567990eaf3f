package faults

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// statusKind answers matching requests itself, without forwarding them:
// status (200..599), with optional headers (a table of strings), body and
// retry_after (a duration, sent as Retry-After in whole seconds, rounded
// up). The Header and Body of the action are shared between decisions and
// must not be modified.
var statusKind = Kind{
	Name: "status", On: OnExchange, Params: []string{"status", "headers", "body", "retry_after"},
	Summary: "answers with status, headers, body and Retry-After instead of forwarding",
	Traits:  AnswersRequests,
	Build: func(a *Args) Effect {
		a.Require("status", "an HTTP status code")
		e := statusEffect{code: int(a.Int("status", 503, 200, 599)), header: http.Header{}}
		headers := a.Table("headers")
		for _, name := range sortedKeys(headers) {
			checkHeader(a, "headers."+name, name, headers[name])
			e.header.Add(name, headers[name])
		}
		if a.Has("retry_after") {
			d := a.Duration("retry_after", 0)
			if e.header.Get("Retry-After") != "" {
				a.Fail("retry_after", ErrConflict, "retry_after and headers.Retry-After both set Retry-After; give one")
			}
			secs := (d + time.Second - 1) / time.Second
			e.header.Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		}
		if body := a.String("body", ""); body != "" {
			e.body = []byte(body)
		}
		return Effect{Exchange: e}
	},
}

type statusEffect struct {
	code   int
	header http.Header
	body   []byte
}

func (statusEffect) Applies(*mcp.Exchange) bool { return true }

func (s statusEffect) Exchange(_ *mcp.Exchange, _ *Rand, a *ExchangeAction) {
	if a.Status == 0 {
		a.Status, a.Header, a.Body = s.code, s.header, s.body
	}
}

// checkHeader reports a header name that is not an HTTP token or a value
// that would split the header.
func checkHeader(a *Args, key, name, value string) {
	if !isToken(name) {
		a.Fail(key, ErrRange, "%q is not a valid header name", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		a.Fail(key, ErrRange, "%q holds a line break, which a header value cannot carry", value)
	}
}

// readHeaderName reads the key "header", a header name, in canonical form.
func readHeaderName(a *Args) string {
	name := a.String("header", "")
	if a.Has("header") && !isToken(name) {
		a.Fail("header", ErrRange, "%q is not a valid header name", name)
	}
	return http.CanonicalHeaderKey(name)
}

// isToken reports whether s is an HTTP token (RFC 9110), as a header name
// must be.
func isToken(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r)
	})
}
