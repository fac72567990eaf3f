#!/usr/bin/env node
// An MCP client on the official TypeScript SDK that calls one long-running
// tool of a third-party server, with a progress token, and checks that the
// result and every progress notification arrived. It reaches the server one
// of three ways:
//
//   --via streamable     StreamableHTTPClientTransport, the SDK's defaults
//                        (reconnection: 1 s growing 1.5x up to 30 s, 2 retries)
//   --via sse            SSEClientTransport (2024-11-05 HTTP+SSE)
//   --via mcp-remote     mcp-remote 0.15.1 as it is used in the field: a stdio
//                        bridge spawned as a child process, reached with the
//                        SDK's StdioClientTransport; --strategy is passed to it
//                        as --transport (http-first, sse-only, ...)
//
// Usage: node thirdparty/ts-client.mjs URL --tool NAME [--args JSON]
//          [--progress N] [--progress-min K] [--progress-any-order] [--expect TEXT] [--via streamable|sse|mcp-remote]
//          [--strategy S] [--side-call-after MS] [--timeout MS]
// Prints one JSON line {"ok", "error", "protocolVersion", "result",
// "progressValues", "requests", "bridgeLog"}; exits 0 on success, 1 on
// failure or when the deadline passes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parseFlags, intFlag } from '../lib/serve.mjs';
import { recordingFetch, deadline } from '../lib/observe.mjs';

const flags = parseFlags(process.argv.slice(2));
const url = flags._[0];
const tool = flags.tool;
if (!url || !tool) {
  console.error('usage: node thirdparty/ts-client.mjs URL --tool NAME [--args JSON] [--progress N] [--expect TEXT] [--via streamable|sse|mcp-remote]');
  process.exit(2);
}
const args = JSON.parse(flags.args ?? '{}');
const wantProgress = intFlag(flags, 'progress', 'PROGRESS', 0);
// --progress-min K accepts progress 1..k for K <= k <= N: only the last
// notifications may be missing (a bridge that loses the one that travels
// with the result); a gap, a duplicate or a value out of order still fails.
const minProgress = intFlag(flags, 'progress-min', 'PROGRESS_MIN', wantProgress);
// --progress-any-order accepts the notifications in any order, each once:
// a server that sends a call's progress on two streams cannot be held to it.
const anyOrder = flags['progress-any-order'] === 'true';
const expect = flags.expect ?? '';
const via = flags.via ?? 'streamable';
const strategy = flags.strategy ?? 'http-first';
const timeoutMs = intFlag(flags, 'timeout', 'CLIENT_TIMEOUT_MS', 20000);
// --side-call-after MS lists the tools again MS after the call began, while
// it runs, as a client that does two things at once: the server then has
// two request streams open in the session.
const sideCallAfter = intFlag(flags, 'side-call-after', 'SIDE_CALL_AFTER_MS', 0);

const here = dirname(fileURLToPath(import.meta.url));
const attempts = [];
const bridgeLog = [];
const summary = { ok: false, url, via, tool };
let cleanup = () => {};
const report = (err) => {
  if (err) summary.error = String(err?.message ?? err);
  summary.requests = attempts;
  if (bridgeLog.length > 0) summary.bridgeLog = bridgeLog.join('').split('\n').filter(Boolean).slice(-40);
  cleanup();
  console.log(JSON.stringify(summary));
};
deadline(timeoutMs, report);

function transport() {
  switch (via) {
    case 'streamable':
      return new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(attempts) });
    case 'sse':
      return new SSEClientTransport(new URL(url), { fetch: recordingFetch(attempts) });
    case 'mcp-remote': {
      // mcp-remote keeps OAuth state under MCP_REMOTE_CONFIG_DIR (default
      // ~/.mcp-auth); each run gets a fresh one, removed at exit.
      const configDir = mkdtempSync(join(tmpdir(), 'fray-mcp-remote-'));
      cleanup = () => rmSync(configDir, { recursive: true, force: true });
      const t = new StdioClientTransport({
        command: process.execPath,
        args: [join(here, '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js'), url, '--allow-http', '--transport', strategy],
        env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir },
        stderr: 'pipe',
      });
      t.stderr?.on('data', (chunk) => bridgeLog.push(String(chunk)));
      return t;
    }
    default:
      throw new Error(`--via ${via}: want streamable, sse or mcp-remote`);
  }
}

async function run() {
  const t = transport();
  const client = new Client({ name: 'fray-thirdparty-ts-client', version: '1.0.0' });
  await client.connect(t);
  summary.protocolVersion = t.protocolVersion ?? client.getServerVersion()?.protocolVersion;
  summary.server = client.getServerVersion();

  const { tools } = await client.listTools();
  if (!tools.some((x) => x.name === tool)) {
    throw new Error(`server has no ${tool} tool; tools: ${tools.map((x) => x.name).join(', ')}`);
  }
  // Progress is counted as the transport hands messages over: the SDK's
  // Client dispatches notifications a microtask later than responses, so
  // when the last progress and the result arrive in one read, onprogress
  // runs after the call settled and its handler is gone.
  const progress = [];
  const dispatched = [];
  const onmessage = t.onmessage;
  t.onmessage = (msg, extra) => {
    if (msg?.method === 'notifications/progress') progress.push(msg.params?.progress);
    onmessage?.(msg, extra);
  };
  let side = Promise.resolve();
  if (sideCallAfter > 0) {
    side = new Promise((resolve) => setTimeout(resolve, sideCallAfter)).then(() => client.listTools());
  }
  const result = await client.callTool({ name: tool, arguments: args }, undefined, {
    onprogress: (p) => dispatched.push(p.progress),
    timeout: timeoutMs,
  });
  await side;
  const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
  summary.result = text;
  summary.progressValues = progress;
  summary.progressDispatched = dispatched;

  const problems = [];
  if (result.isError) problems.push(`tool returned an error: ${text}`);
  if (expect && !text.includes(expect)) problems.push(`result ${JSON.stringify(text)} does not contain ${JSON.stringify(expect)}`);
  const want = Array.from({ length: Math.max(minProgress, Math.min(progress.length, wantProgress)) }, (_, i) => i + 1);
  const got = anyOrder ? [...progress].sort((a, b) => a - b) : progress;
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    const range = minProgress < wantProgress ? ` (1..k, ${minProgress} <= k <= ${wantProgress})` : '';
    problems.push(`progress ${JSON.stringify(progress)}, want ${JSON.stringify(want)}${range}`);
  }
  if (t.terminateSession) await t.terminateSession().catch(() => {});
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
