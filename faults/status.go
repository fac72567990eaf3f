package faults

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// statusKind answers matching requests itself, without forwarding them:
// status (200..599), with optional headers (a table of strings), body and
// retry_after (a duration, sent as Retry-After in whole seconds, rounded
// up). The Header and Body of the action are shared between decisions and
// must not be modified.
var statusKind = kindDef{
	name: "status", target: onExchange, params: []string{"status", "headers", "body", "retry_after"},
	summary: "answers with status, headers, body and Retry-After instead of forwarding",
	build: func(a *args) any {
		a.require("status", "an HTTP status code")
		e := statusEffect{code: int(a.integer("status", 503, 200, 599)), header: http.Header{}}
		headers := a.table("headers")
		for _, name := range sortedKeys(headers) {
			checkHeader(a, "headers."+name, name, headers[name])
			e.header.Add(name, headers[name])
		}
		if a.has("retry_after") {
			d := a.duration("retry_after", 0)
			if e.header.Get("Retry-After") != "" {
				a.fail("retry_after", ErrConflict, "retry_after and headers.Retry-After both set Retry-After; give one")
			}
			secs := (d + time.Second - 1) / time.Second
			e.header.Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		}
		if body := a.str("body", ""); body != "" {
			e.body = []byte(body)
		}
		return e
	},
}

type statusEffect struct {
	code   int
	header http.Header
	body   []byte
}

func (statusEffect) applies(*Exchange) bool { return true }

func (s statusEffect) exchange(_ *Exchange, _ *rng, a *ExchangeAction) {
	if a.Status == 0 {
		a.Status, a.Header, a.Body = s.code, s.header, s.body
	}
}

// checkHeader reports a header name that is not an HTTP token or a value
// that would split the header.
func checkHeader(a *args, key, name, value string) {
	if !isToken(name) {
		a.fail(key, ErrRange, "%q is not a valid header name", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		a.fail(key, ErrRange, "%q holds a line break, which a header value cannot carry", value)
	}
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}
