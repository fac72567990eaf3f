#!/usr/bin/env node
// An MCP client on the TypeScript SDK's Streamable HTTP transport. It
// initializes, lists tools, calls slow-count with a progress token and checks
// that every progress notification and the result arrived, even though the
// server closes the SSE stream mid-call and the client has to resume it with
// a GET carrying Last-Event-ID.
//
// Usage: node streamable-client.mjs URL [--count N] [--close-after K] [--delay-ms MS]
//                                       [--timeout MS] [--require-resume false]
// Prints one JSON line: {"ok":true|false, "result", "progress", "reconnects", ...}.
// Exits 0 on success, 1 on failure or when the deadline (default 20000 ms) passes.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { recordingFetch, deadline } from './lib/observe.mjs';

const flags = parseFlags(process.argv.slice(2));
const url = flags._[0] ?? process.env.MCP_URL;
if (!url) {
  console.error('usage: node streamable-client.mjs URL [--count N] [--close-after K] [--timeout MS]');
  process.exit(2);
}
const count = intFlag(flags, 'count', 'COUNT', 6);
const closeAfter = intFlag(flags, 'close-after', 'CLOSE_AFTER', 3);
const delayMs = intFlag(flags, 'delay-ms', 'DELAY_MS', 20);
const timeoutMs = intFlag(flags, 'timeout', 'CLIENT_TIMEOUT_MS', 20000);
const requireResume = (flags['require-resume'] ?? 'true') !== 'false';

const attempts = [];
const summary = { ok: false, url, expectedProgress: count };
const report = (err) => {
  if (err) summary.error = String(err?.message ?? err);
  summary.requests = attempts;
  console.log(JSON.stringify(summary));
};
deadline(timeoutMs, report);

async function run() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: recordingFetch(attempts),
    // The server's retry field replaces the initial delay; keep the fallback
    // short so a server that sends none does not stall the run for seconds.
    reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  const client = new Client({ name: 'fray-example-streamable-client', version: '1.0.0' });
  await client.connect(transport);
  summary.sessionId = transport.sessionId;
  summary.protocolVersion = transport.protocolVersion;

  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === 'slow-count')) {
    throw new Error(`server has no slow-count tool; tools: ${tools.map((t) => t.name).join(', ')}`);
  }

  const progress = [];
  const resumptionTokens = [];
  const result = await client.callTool(
    { name: 'slow-count', arguments: { count, closeAfter, delayMs } },
    undefined,
    {
      onprogress: (p) => progress.push(p.progress),
      onresumptiontoken: (t) => resumptionTokens.push(t),
      timeout: timeoutMs,
    },
  );
  summary.result = result.content?.[0]?.text;
  summary.structured = result.structuredContent;
  summary.progress = progress.length;
  summary.progressValues = progress;
  summary.resumptionTokens = resumptionTokens;
  summary.reconnects = attempts.filter((a) => a.method === 'GET' && a.lastEventId).length;

  const problems = [];
  if (result.isError) problems.push(`tool returned an error: ${JSON.stringify(result.content)}`);
  if (summary.result !== `counted to ${count}`) problems.push(`result ${JSON.stringify(summary.result)}, want "counted to ${count}"`);
  const want = Array.from({ length: count }, (_, i) => i + 1);
  if (JSON.stringify(progress) !== JSON.stringify(want)) problems.push(`progress ${JSON.stringify(progress)}, want ${JSON.stringify(want)}`);
  if (requireResume && closeAfter > 0 && closeAfter <= count && summary.reconnects === 0) {
    problems.push('the server closed the stream but no GET with Last-Event-ID was sent');
  }
  await transport.terminateSession().catch(() => {});
  await client.close();
  if (problems.length > 0) throw new Error(problems.join('; '));
  summary.ok = true;
}

run().then(
  () => {
    report();
    process.exit(0);
  },
  (err) => {
    report(err);
    process.exit(1);
  },
);
