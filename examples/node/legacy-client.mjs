#!/usr/bin/env node
// An MCP client on the TypeScript SDK's deprecated HTTP+SSE transport: it
// opens the SSE stream, follows the endpoint event, calls add(2, 3) and
// checks the answer.
//
// Usage: node legacy-client.mjs URL [--timeout MS]     (URL of the SSE endpoint)
// Prints one JSON line {"ok", "result", "requests", ...}; exits 0 on success.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { recordingFetch, deadline } from './lib/observe.mjs';

const flags = parseFlags(process.argv.slice(2));
const url = flags._[0] ?? process.env.MCP_URL;
if (!url) {
  console.error('usage: node legacy-client.mjs URL [--timeout MS]');
  process.exit(2);
}
const timeoutMs = intFlag(flags, 'timeout', 'CLIENT_TIMEOUT_MS', 20000);

const attempts = [];
const summary = { ok: false, url };
const report = (err) => {
  if (err) summary.error = String(err?.message ?? err);
  summary.requests = attempts;
  console.log(JSON.stringify(summary));
};
deadline(timeoutMs, report);

async function run() {
  const transport = new SSEClientTransport(new URL(url), { fetch: recordingFetch(attempts) });
  const client = new Client({ name: 'fray-example-legacy-client', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === 'add')) throw new Error('server has no add tool');
  const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }, undefined, { timeout: timeoutMs });
  summary.result = result.content?.[0]?.text;
  await client.close();
  if (result.isError || summary.result !== '5') throw new Error(`add(2, 3) returned ${JSON.stringify(result.content)}`);
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
