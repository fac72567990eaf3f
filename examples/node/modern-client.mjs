#!/usr/bin/env node
// An MCP client on the TypeScript SDK v2 (@modelcontextprotocol/client) that
// speaks either era: --era 2026-07-28 pins the stateless revision (connect
// sends server/discover and every request carries the _meta envelope and the
// routing headers), --era 2025-11-25 keeps the SDK's default legacy
// negotiation (initialize, sessions when the server has them), and --era auto
// probes with server/discover and falls back to initialize.
//
// It lists the tools, optionally opens a subscriptions/listen stream
// (--listen), calls slow-count with a progress token and checks the result
// and every progress notification. With --expect-list-changed N it also waits
// for N notifications/tools/list_changed on the listen stream.
//
// Usage: node modern-client.mjs URL [--era 2026-07-28|2025-11-25|auto] [--count N]
//                                   [--delay-ms MS] [--close-after N] [--timeout MS] [--listen]
//                                   [--expect-list-changed N]
// Prints one JSON line: {"ok", "protocolVersion", "era", "result", "progressValues", ...}.
// Exits 0 on success, 1 on failure or when the deadline (default 20000 ms) passes.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { recordingFetch, deadline } from './lib/observe.mjs';

const flags = parseFlags(process.argv.slice(2));
const url = flags._[0] ?? process.env.MCP_URL;
const era = flags.era ?? '2026-07-28';
if (!url || !['2026-07-28', '2025-11-25', 'auto'].includes(era)) {
  console.error('usage: node modern-client.mjs URL [--era 2026-07-28|2025-11-25|auto] [--count N] [--timeout MS]');
  process.exit(2);
}
const count = intFlag(flags, 'count', 'COUNT', 6);
const delayMs = intFlag(flags, 'delay-ms', 'DELAY_MS', 20);
// closeAfter 0 asks a server whose tool can close its own stream mid-call
// (streamable-server.mjs, the Go SDK's refpeer) not to.
const closeAfter = intFlag(flags, 'close-after', 'CLOSE_AFTER', 0);
const timeoutMs = intFlag(flags, 'timeout', 'CLIENT_TIMEOUT_MS', 20000);
const listen = flags.listen === 'true';
const wantListChanged = intFlag(flags, 'expect-list-changed', 'EXPECT_LIST_CHANGED', 0);

const attempts = [];
const summary = { ok: false, url, era };
const report = (err) => {
  if (err) summary.error = String(err?.message ?? err);
  summary.requests = attempts;
  console.log(JSON.stringify(summary));
};
// stage says what the client was doing, for the error of a run that timed out.
let stage = 'connecting';
deadline(timeoutMs, (err) => report(new Error(`${err.message} while ${stage}`)));

const versionNegotiation = {
  '2026-07-28': { mode: { pin: '2026-07-28' } },
  '2025-11-25': { mode: 'legacy' },
  auto: { mode: 'auto' },
}[era];

async function run() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: recordingFetch(attempts),
    reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  const client = new Client({ name: 'fray-example-modern-client', version: '1.0.0' }, { versionNegotiation });
  let listChanged = 0;
  let sawListChanged;
  const listChangedDone = new Promise((resolve) => (sawListChanged = resolve));
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    listChanged++;
    if (listChanged >= wantListChanged) sawListChanged();
  });
  await client.connect(transport);
  stage = 'listing the tools';
  summary.protocolVersion = client.getNegotiatedProtocolVersion();
  summary.protocolEra = client.getProtocolEra();
  summary.sessionId = transport.sessionId;

  const { tools } = await client.listTools();
  if (!tools.some((t) => t.name === 'slow-count')) {
    throw new Error(`server has no slow-count tool; tools: ${tools.map((t) => t.name).join(', ')}`);
  }
  // subscriptions/listen exists from 2026-07-28 on; a 2025-era connection
  // gets its list_changed notifications on the GET stream instead.
  const modern = summary.protocolEra === 'modern';
  let subscription;
  if (listen && modern) {
    stage = 'opening subscriptions/listen';
    subscription = await client.listen({ toolsListChanged: true });
    summary.honoredFilter = subscription.honoredFilter;
  }

  const progress = [];
  stage = 'calling slow-count';
  const result = await client.callTool({ name: 'slow-count', arguments: { count, closeAfter, delayMs } }, {
    onprogress: (p) => progress.push(p.progress),
    timeout: timeoutMs,
  });
  summary.result = result.content?.[0]?.text;
  summary.progressValues = progress;
  stage = `waiting for ${wantListChanged} notifications/tools/list_changed (${listChanged} so far)`;
  if (wantListChanged > 0 && modern) await listChangedDone;
  stage = 'closing';
  summary.listChanged = listChanged;
  if (subscription) {
    await subscription.close();
    summary.subscriptionClosed = await subscription.closed;
  }

  const problems = [];
  if (result.isError) problems.push(`tool returned an error: ${JSON.stringify(result.content)}`);
  if (summary.result !== `counted to ${count}`) problems.push(`result ${JSON.stringify(summary.result)}, want "counted to ${count}"`);
  const want = Array.from({ length: count }, (_, i) => i + 1);
  if (JSON.stringify(progress) !== JSON.stringify(want)) problems.push(`progress ${JSON.stringify(progress)}, want ${JSON.stringify(want)}`);
  if (era !== 'auto' && summary.protocolVersion !== era) problems.push(`negotiated ${summary.protocolVersion}, want ${era}`);
  if (transport.sessionId) await transport.terminateSession().catch(() => {});
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
