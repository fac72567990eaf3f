#!/usr/bin/env node
// A server on tmcp 1.20.0 with @tmcp/transport-http 0.9.0 (schemas through
// @tmcp/adapter-valibot 0.1.6, Node's http through
// @remix-run/node-fetch-server 0.14.2, as the transport's README shows).
// The transport keeps sessions but has no event store: its SSE events carry
// no ids, so nothing can be resumed. Its slow-count tool has the wire
// contract of examples/gosdk and lib/slow-count.mjs (count, delayMs;
// progress per step; "counted to N").
//
// Usage: node thirdparty/tmcp-server.mjs     (PORT: listen port, default 0)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; SIGTERM ends it.
import http from 'node:http';
import { McpServer } from 'tmcp';
import { HttpTransport } from '@tmcp/transport-http';
import { ValibotJsonSchemaAdapter } from '@tmcp/adapter-valibot';
import { createRequestListener } from '@remix-run/node-fetch-server';
import * as v from 'valibot';
import { pinLoopback } from './lib/loopback.mjs';

pinLoopback('/mcp');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const server = new McpServer(
  { name: 'fray-example-tmcp', version: '1.0.0', description: 'slow-count on tmcp' },
  { adapter: new ValibotJsonSchemaAdapter(), capabilities: { tools: {} } },
);
server.tool(
  {
    name: 'slow-count',
    description: 'Counts to count with one progress notification per step, delayMs apart.',
    schema: v.object({
      count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 6),
      delayMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10000)), 20),
    }),
  },
  async ({ count, delayMs }) => {
    for (let i = 1; i <= count; i++) {
      server.progress(i, count, `step ${i} of ${count}`);
      await sleep(delayMs);
    }
    return { content: [{ type: 'text', text: `counted to ${count}` }] };
  },
);

const transport = new HttpTransport(server, { path: '/mcp' });
const httpServer = http.createServer(
  createRequestListener(async (request) => (await transport.respond(request)) ?? new Response(null, { status: 404 })),
);
httpServer.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
const stop = () => {
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
