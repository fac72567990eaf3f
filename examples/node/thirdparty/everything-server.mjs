#!/usr/bin/env node
// The MCP project's reference server, @modelcontextprotocol/server-everything,
// as it ships: "streamableHttp" (the default here) serves Streamable HTTP at
// /mcp with the package's own in-memory event store (so POST streams are
// primed, with no retry field); "sse" serves the 2024-11-05 transport at /sse.
// Its trigger-long-running-operation tool (duration in seconds, steps) sends
// one progress notification per step.
//
// Usage: node thirdparty/everything-server.mjs [streamableHttp|sse]
// The package reads PORT and listens on every interface; here PORT defaults
// to 0 and the listen is pinned to 127.0.0.1 (lib/loopback.mjs). Prints
// "LISTENING http://127.0.0.1:PORT/mcp" (or /sse) when ready; SIGTERM ends it.
import { pinLoopback } from './lib/loopback.mjs';

const mode = process.argv[2] ?? 'streamableHttp';
if (mode !== 'streamableHttp' && mode !== 'sse') {
  console.error(`usage: everything-server.mjs [streamableHttp|sse], not ${JSON.stringify(mode)}`);
  process.exit(2);
}
process.env.PORT ??= '0';
pinLoopback(mode === 'sse' ? '/sse' : '/mcp');
// The package only shuts down on SIGINT.
process.on('SIGTERM', () => process.exit(0));
process.argv = [process.argv[0], 'server-everything', mode];
await import('@modelcontextprotocol/server-everything/dist/index.js');
