#!/usr/bin/env node
// An MCP server on the TypeScript SDK's deprecated HTTP+SSE transport
// (protocol 2024-11-05): GET /sse opens the event stream, whose first event
// names the URL (/messages?sessionId=...) to POST messages to. Tools: add,
// and slow-count (lib/slow-count.mjs), which streams progress.
//
// Usage: node legacy-server.mjs      (PORT: listen port, default 0)
// Prints "LISTENING http://127.0.0.1:PORT/sse" when ready; exits 0 on SIGTERM.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';
import { serve } from './lib/serve.mjs';
import { registerSlowCount } from './lib/slow-count.mjs';

/** @type {Map<string, SSEServerTransport>} */
const sessions = new Map();

function newServer() {
  const server = new McpServer({ name: 'fray-example-legacy', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  // A long call with progress, as on the Streamable HTTP servers; this
  // transport has no stream of its own to close, so closeAfter does nothing.
  registerSlowCount(server);
  return server;
}

const app = createMcpExpressApp({ host: '127.0.0.1' });

app.get('/sse', async (req, res) => {
  const transport = new SSEServerTransport('/messages', res);
  sessions.set(transport.sessionId, transport);
  res.on('close', () => sessions.delete(transport.sessionId));
  try {
    await newServer().connect(transport);
  } catch (err) {
    console.error(`connect: ${err?.stack ?? err}`);
  }
});

app.post('/messages', async (req, res) => {
  const transport = sessions.get(String(req.query.sessionId ?? ''));
  if (!transport) {
    res.status(404).send('unknown session');
    return;
  }
  await transport.handlePostMessage(req, res, req.body);
});

serve(app, '/sse', async () => {
  await Promise.allSettled([...sessions.values()].map((t) => t.close()));
});
