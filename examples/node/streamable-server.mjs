#!/usr/bin/env node
// An MCP server on the TypeScript SDK's Streamable HTTP transport with
// resumability on: sessions, an in-memory event store per session and a retry interval,
// so every POST stream starts with a priming event (id, retry, empty data).
// Its slow-count tool closes the request's stream mid-call (SEP-1699).
//
// Usage: node streamable-server.mjs [--retry-interval MS] [--trace-events]
//   --retry-interval MS  retry sent in priming events (env RETRY_INTERVAL_MS; default 100)
//   --trace-events       print "EVENT <id> <stream>" for each stored event
//   PORT                 listen port (default 0: any free port)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; exits 0 on SIGTERM.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MemoryEventStore } from './lib/event-store.mjs';
import { registerSlowCount } from './lib/slow-count.mjs';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { serveStreamable } from './lib/streamable-app.mjs';

const flags = parseFlags(process.argv.slice(2));
const retryInterval = intFlag(flags, 'retry-interval', 'RETRY_INTERVAL_MS', 100);
const traceEvents = flags['trace-events'] === 'true';

const newEventStore = () =>
  new MemoryEventStore({
    onStore: traceEvents ? (id, stream) => console.log(`EVENT ${id} ${stream}`) : undefined,
  });

function newServer() {
  const server = new McpServer({ name: 'fray-example-streamable', version: '1.0.0' }, { capabilities: { logging: {} } });
  registerSlowCount(server);
  return server;
}

serveStreamable({ newServer, newEventStore, retryInterval });
