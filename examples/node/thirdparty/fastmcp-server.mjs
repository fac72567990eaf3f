#!/usr/bin/env node
// A server on fastmcp 4.20.16 (punkpeye/fastmcp), with the httpStream
// transport: fastmcp hands HTTP to mcp-proxy's startHTTPServer, which serves
// Streamable HTTP at /mcp with a fresh in-memory event store per session
// (and the legacy HTTP+SSE transport at /sse beside it). Its slow-count tool
// has the wire contract of examples/gosdk and lib/slow-count.mjs (count,
// delayMs; progress per step; "counted to N").
//
// Usage: node thirdparty/fastmcp-server.mjs     (PORT: listen port, default 0)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; SIGTERM ends it.
import { FastMCP } from 'fastmcp';
import { z } from 'zod';
import { pinLoopback } from './lib/loopback.mjs';

pinLoopback('/mcp');

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error('aborted'));
    });
  });

const server = new FastMCP({ name: 'fray-example-fastmcp', version: '1.0.0' });
server.addTool({
  name: 'slow-count',
  description: 'Counts to count with one progress notification per step, delayMs apart.',
  parameters: z.object({
    count: z.number().int().min(1).max(1000).default(6),
    delayMs: z.number().int().min(0).max(10000).default(20),
  }),
  execute: async ({ count, delayMs }, { reportProgress, signal }) => {
    for (let i = 1; i <= count; i++) {
      await reportProgress({ progress: i, total: count });
      await sleep(delayMs, signal);
    }
    return `counted to ${count}`;
  },
});

await server.start({
  transportType: 'httpStream',
  httpStream: { host: '127.0.0.1', port: Number(process.env.PORT ?? 0), endpoint: '/mcp' },
});
const stop = () => server.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
