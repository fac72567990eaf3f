package forward_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frayproxy/fray/faults"
	"github.com/frayproxy/fray/proxy/forward"
)

// BenchmarkProfileCost measures what a profile costs per event when none of
// its faults hit: events/s through fray with the empty profile, and with 20
// event faults that select the tools/call POST stream (so they are kept
// when the stream starts) but events that never occur (so each is asked
// about every event and never fires). Compare the two in one run:
//
//	go test -run XXX -bench BenchmarkProfileCost -count 5 ./proxy/forward/
//
// The cost is 1 - events/s(20-unmatched) / events/s(empty).
func BenchmarkProfileCost(b *testing.B) {
	for _, tc := range []struct {
		name    string
		profile string
	}{
		{"empty", ""},
		{"20-unmatched", unmatchedProfile(20)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			plan := activeProfile(b, tc.name+".toml", tc.profile)
			if prof, _ := plan.InForce(); len(prof.Faults) != strings.Count(tc.profile, "[[fault]]") {
				b.Fatalf("%d faults parsed", len(prof.Faults))
			}
			benchProfileStream(b, plan)
		})
	}
}

// unmatchedProfile is n event faults on tools/call POST streams whose
// event selectors never match the stream's progress notifications: in
// turn an rpc_method, an SSE event type, an nth past the end of the run, the priming
// event, and a stream_after of an hour.
func unmatchedProfile(n int) string {
	kinds := []string{"drop", "duplicate", "strip-retry", "strip-id", "corrupt", "drop-priming", "delay", "set-retry", "rewrite-id"}
	extra := map[string]string{"delay": "delay = \"1s\"\n", "set-retry": "retry = \"1s\"\n", "rewrite-id": "id = \"{id}-x\"\n"}
	never := []string{
		"rpc_method = \"never/%d\"\n",
		"event = \"never-%d\"\n",
		"nth = 21474830%d\n",
		"priming = true # %d\n",
		"stream_after = \"1h\" # %d\n",
	}
	var b strings.Builder
	for i := range n {
		k := kinds[i%len(kinds)]
		sel := fmt.Sprintf(never[i%len(never)], i)
		if k == "drop-priming" && strings.HasPrefix(sel, "priming") {
			sel = fmt.Sprintf(never[0], i)
		}
		fmt.Fprintf(&b, "[[fault]]\nkind = %q\nstream = \"post\"\nrequest_method = \"tools/call\"\n%s%s\n", k, sel, extra[k])
	}
	return b.String()
}

// benchProfileStream streams b.N progress notifications through fray on
// one tools/call POST stream and reports events/s.
func benchProfileStream(b *testing.B, plan faults.Plan) {
	up := upServer(b, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		sseHeader(w)
		buf := make([]byte, 0, 64<<10)
		for i := range n {
			buf = appendProgressEvent(buf, i)
			if len(buf) > 60<<10 || i == n-1 {
				if _, err := w.Write(buf); err != nil {
					return
				}
				buf = buf[:0]
			}
		}
	})
	fray := upServer(b, newProxy(b, up, forward.Options{Faults: plan}).ServeHTTP)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	want := 0
	for i := range b.N {
		want += len(appendProgressEvent(nil, i))
	}
	b.SetBytes(int64(want / b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	resp, err := client.Post(fray+"/mcp?n="+strconv.Itoa(b.N), "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow-count"}}`))
	if err != nil {
		b.Fatal(err)
	}
	got, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil || got != int64(want) {
		b.Fatalf("read %d bytes (%v), want %d: a fault fired or the stream broke", got, err, want)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

func appendProgressEvent(b []byte, i int) []byte {
	b = append(b, "id: 1-"...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":"...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, "}}\n\n"...)
}
