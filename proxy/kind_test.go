package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/examples/scripted"
	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/profiles"
	"github.com/frayproxy/fray/proxy/mcp"
)

// guillotine is a fault kind defined outside package faults, as the guide
// to adding a kind says: it ends a stream right after its priming event,
// and declares that it ends streams. Nothing in the verifier names it.
type guillotine struct{}

var _ faults.EventEffect = guillotine{}

func (guillotine) Applies(ev *mcp.Event, _ *faults.StreamState) bool { return ev.Priming }

func (guillotine) Event(_ *mcp.Event, _ *faults.Rand, a *faults.EventAction) {
	if a.Close == faults.CloseNone {
		a.Close = faults.CloseAfter
	}
}

func init() {
	err := faults.Register(&faults.Kind{
		Name: "guillotine", On: faults.OnStream, Once: true, Traits: faults.EndsStream,
		Summary: "ends the stream right after its priming event",
		Build:   func(*faults.Args) faults.Effect { return faults.Effect{Event: guillotine{}} },
	})
	if err != nil {
		panic(err)
	}
}

// TestNewKindIsAttributedByItsTraits: a kind added from outside, which
// ends streams, is attributed by the verifier as its traits say: the cut
// is never held against the server, a client that recovers passes, and a
// client that reconnects without Last-Event-ID is failed with evidence
// naming the new kind as the fault that set the situation up.
func TestNewKindIsAttributedByItsTraits(t *testing.T) {
	prof, err := profiles.Parse("cut.toml", strings.NewReader(`name = "cut"
[[fault]]
kind = "guillotine"
stream = "post"
request_method = "tools/call"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range resumingClients {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := scriptedRun(t, prof, scripted.ServerOptions{},
				scripted.ClientOptions{Calls: 2, Fault: tc.client, MaxAttempts: 2, Idle: 1500 * time.Millisecond})
			if n := faultCount(r, "guillotine"); n == 0 {
				t.Fatal("the new kind never fired")
			}
			// The peer the check names is found at its check's severity; an
			// end-to-end consequence (the request it left unanswered) may
			// fail too, but only citing that check.
			var named []string
			for _, c := range r.Checks {
				if c.Status != "fail" && c.Status != "warn" {
					continue
				}
				if strings.HasPrefix(c.ID, "e2e.") {
					for _, ev := range c.Evidence {
						if tc.want == "" || !strings.Contains(ev.Message, tc.want) {
							t.Errorf("%s: %s, which does not cite %q", c.ID, ev.Message, tc.want)
						}
					}
					continue
				}
				named = append(named, c.ID)
				if c.ID != tc.want {
					continue
				}
				ev := c.Evidence[0]
				if ev.Fault == nil || ev.Fault.Kind != "guillotine" {
					t.Errorf("%s evidence %+v names fault %+v, want the guillotine that cut the stream", c.ID, ev, ev.Fault)
				}
			}
			want := []string{}
			if tc.want != "" {
				want = []string{tc.want}
			}
			if strings.Join(named, ",") != strings.Join(want, ",") {
				t.Errorf("checks that found something %q, want %q", named, want)
			}
		})
	}
}
