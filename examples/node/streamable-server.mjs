#!/usr/bin/env node
// An MCP server on the TypeScript SDK's Streamable HTTP transport with
// resumability on: sessions, an in-memory event store and a retry interval,
// so every POST stream starts with a priming event (id, retry, empty data).
// Its slow-count tool closes the request's stream mid-call (SEP-1699).
//
// Usage: node streamable-server.mjs [--retry-interval MS] [--trace-events]
//   --retry-interval MS  retry sent in priming events (env RETRY_INTERVAL_MS; default 100)
//   --trace-events       print "EVENT <id> <stream>" for each stored event
//   PORT                 listen port (default 0: any free port)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; exits 0 on SIGTERM.
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { MemoryEventStore } from './lib/event-store.mjs';
import { registerSlowCount } from './lib/slow-count.mjs';
import { serve, parseFlags, intFlag } from './lib/serve.mjs';

const flags = parseFlags(process.argv.slice(2));
const retryInterval = intFlag(flags, 'retry-interval', 'RETRY_INTERVAL_MS', 100);
const traceEvents = flags['trace-events'] === 'true';

const eventStore = new MemoryEventStore({
  onStore: traceEvents ? (id, stream) => console.log(`EVENT ${id} ${stream}`) : undefined,
});

/** @type {Map<string, StreamableHTTPServerTransport>} */
const sessions = new Map();

function newServer() {
  const server = new McpServer({ name: 'fray-example-streamable', version: '1.0.0' }, { capabilities: { logging: {} } });
  registerSlowCount(server);
  return server;
}

const app = createMcpExpressApp({ host: '127.0.0.1' });

app.all('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  try {
    if (sessionId) {
      const transport = sessions.get(sessionId);
      if (!transport) {
        res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        return;
      }
      await transport.handleRequest(req, res, req.body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
      res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore,
      retryInterval,
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (err) {
    console.error(`handle ${req.method}: ${err?.stack ?? err}`);
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
  }
});

serve(app, '/mcp', async () => {
  await Promise.allSettled([...sessions.values()].map((t) => t.close()));
});
