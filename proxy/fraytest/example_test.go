package fraytest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/frayproxy/fray/examples/gosdk/refpeer"
	"github.com/frayproxy/fray/proxy/fraytest"
)

// Put fray in front of a server on the official Go SDK (Streamable HTTP
// with an event store), cut every tool call's stream after its priming
// event, and check that the SDK's client resumes and the pair recovers. In
// a test, fraytest.Start does the same and fails the test with the
// findings when the verdict is not a pass.
func ExampleNew() {
	srv := httptest.NewServer(refpeer.NewHandler(refpeer.ServerOptions{}))
	defer srv.Close()

	f, err := fraytest.New(srv.URL+"/mcp", fraytest.Profile("polling-server"), fraytest.Seed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := refpeer.RunClient(ctx, refpeer.ClientOptions{Endpoint: f.URL, Count: 3})
	if err != nil {
		fmt.Println("client:", err)
	}
	r, err := f.Close()
	if err != nil {
		fmt.Println(err)
	}
	fmt.Printf("client got %q after %d resumption(s); fray: %s\n", res.Text, len(res.Resumptions), r.Verdict)
	// Output: client got "counted to 3" after 1 resumption(s); fray: pass
}
