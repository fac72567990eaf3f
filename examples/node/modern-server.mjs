#!/usr/bin/env node
// An MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server), served
// as that SDK serves revision 2026-07-28: createMcpHandler builds a fresh server
// per HTTP request from one factory, so there are no sessions, no event store,
// no SSE ids and no resumption. 2025-era traffic (an initialize without the
// per-request _meta envelope) is answered by the same factory through the
// SDK's stateless legacy fallback, unless --legacy reject.
//
// Its slow-count tool sends one progress notification per step and honours
// the request's abort signal: in 2026-07-28 closing the response stream is the
// cancellation of the request, and the server must send nothing more for it.
// With --notify-list-changed, each call that ends, completed or cancelled,
// publishes notifications/tools/list_changed to the open
// subscriptions/listen streams: a client that listens while its call is cut
// gets a notification after the cut, whatever else the server is doing.
//
// Usage: node modern-server.mjs [--legacy stateless|reject] [--response-mode auto|sse|json]
//                               [--notify-list-changed]
//   PORT  listen port (default 0: any free port)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready, and
// "CANCELLED <request id>" whenever a call stopped because its request was
// aborted; exits 0 on SIGTERM.
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { parseFlags } from './lib/serve.mjs';

const flags = parseFlags(process.argv.slice(2));
const legacy = flags.legacy ?? 'stateless';
const responseMode = flags['response-mode'] ?? 'auto';
const notifyListChanged = flags['notify-list-changed'] === 'true';
if (!['stateless', 'reject'].includes(legacy) || !['auto', 'sse', 'json'].includes(responseMode)) {
  console.error(`--legacy ${legacy} --response-mode ${responseMode}: want stateless|reject and auto|sse|json`);
  process.exit(2);
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

let handler;

function newServer() {
  const server = new McpServer(
    { name: 'fray-example-modern', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.registerTool(
    'slow-count',
    {
      description: 'Counts to count with one progress notification per step, delayMs apart.',
      inputSchema: z.object({
        count: z.number().int().min(1).max(1000).default(6),
        closeAfter: z.number().int().min(0).default(0),
        delayMs: z.number().int().min(0).max(10000).default(20),
      }),
    },
    async ({ count, delayMs }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      const signal = ctx.mcpReq.signal;
      for (let i = 1; i <= count; i++) {
        if (signal.aborted) break;
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: count, message: `step ${i} of ${count}` },
          });
        }
        await sleep(delayMs, signal);
      }
      if (notifyListChanged) handler.notify.toolsChanged();
      if (signal.aborted) {
        console.log(`CANCELLED ${ctx.mcpReq.id}`);
        throw new Error(`slow-count: request ${ctx.mcpReq.id} cancelled`);
      }
      return {
        content: [{ type: 'text', text: `counted to ${count}` }],
        structuredContent: { counted: count, streamClosed: false },
      };
    },
  );
  return server;
}

handler = createMcpHandler(newServer, {
  legacy,
  responseMode,
  onerror: (err) => console.error(`mcp: ${err?.message ?? err}`),
});
const listener = toNodeHandler(handler);
const server = http.createServer((req, res) => {
  if (new URL(req.url, 'http://x').pathname !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  listener(req, res);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`LISTENING http://127.0.0.1:${server.address().port}/mcp`);
});
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await handler.close().catch((err) => console.error(`close: ${err?.message ?? err}`));
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
