#!/usr/bin/env node
// mcp-proxy 6.7.19 (punkpeye/mcp-proxy) bridging server-everything's stdio
// mode to HTTP: "stream" (the default here) serves Streamable HTTP at /mcp,
// with mcp-proxy's own in-memory event store per session; "sse" the legacy
// transport at /sse. It runs as
//   mcp-proxy --server MODE --host 127.0.0.1 --port 0 -- node <server-everything> stdio
// (mcp-proxy's host defaults to "::"; the listen is also checked by
// lib/loopback.mjs).
//
// Usage: node thirdparty/mcp-proxy.mjs [stream|sse]      (PORT: listen port, default 0)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" (or /sse) when ready; SIGTERM ends it.
import { createRequire } from 'node:module';
import { pinLoopback } from './lib/loopback.mjs';

const mode = process.argv[2] ?? 'stream';
if (mode !== 'stream' && mode !== 'sse') {
  console.error(`usage: mcp-proxy.mjs [stream|sse], not ${JSON.stringify(mode)}`);
  process.exit(2);
}
const require = createRequire(import.meta.url);
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
pinLoopback(mode === 'sse' ? '/sse' : '/mcp');
process.argv = [process.argv[0], 'mcp-proxy', '--server', mode, '--host', '127.0.0.1', '--port', process.env.PORT ?? '0', '--', process.execPath, everything, 'stdio'];
await import('mcp-proxy/dist/bin/mcp-proxy.mjs');
