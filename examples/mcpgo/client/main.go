// Command client runs the mcp-go (github.com/mark3labs/mcp-go v1.2.1)
// example client once: it calls a tool with a progress token and checks the
// result and the progress notifications.
//
//	go run ./examples/mcpgo/client [-transport streamable|sse] [-tool slow-count]
//	    [-args '{"count":6}'] [-progress 6] [-expect "counted to 6"] [-timeout 20s] URL
//
// It prints one JSON line ({"ok", "error", "protocolVersion", "result",
// "progressValues"}) and exits 0 on success, 1 on failure.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/frayproxy/fray/examples/mcpgo/mcpgopeer"
)

func main() {
	kind := flag.String("transport", mcpgopeer.Streamable, "streamable or sse")
	tool := flag.String("tool", mcpgopeer.ToolName, "tool to call")
	args := flag.String("args", `{"count":6,"delayMs":20}`, "the tool's arguments, as a JSON object")
	progress := flag.Int("progress", 6, "progress notifications the call must bring")
	expect := flag.String("expect", "counted to 6", "text the result must contain")
	version := flag.String("protocol-version", mcpgopeer.ResumableProtocolVersion, "protocol revision to ask for")
	timeout := flag.Duration("timeout", 20*time.Second, "overall deadline")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: client [flags] URL")
		os.Exit(2)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(*args), &a); err != nil {
		fmt.Fprintf(os.Stderr, "client: -args %q: %v\n", *args, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	res, err := mcpgopeer.RunClient(ctx, mcpgopeer.ClientOptions{
		Endpoint: flag.Arg(0), Transport: *kind, ProtocolVersion: *version,
		Tool: *tool, Args: a, Progress: *progress, Expect: *expect,
	})
	line, jerr := json.Marshal(res)
	if jerr != nil {
		fmt.Fprintln(os.Stderr, "client:", jerr)
		os.Exit(1)
	}
	fmt.Println(string(line))
	if err != nil {
		os.Exit(1)
	}
}
