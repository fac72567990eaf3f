#!/usr/bin/env node
// streamable-server.mjs, plus a notification on the standalone GET stream of
// every session at a fixed interval (a logging message, related to no
// request), so that the standalone stream has events to replay when a client
// resumes it. --store sdk keeps the events in the SDK's own example event
// store (@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js)
// instead of lib/event-store.mjs.
//
// Usage: node announcing-server.mjs [--announce-ms MS] [--store own|sdk] [--retry-interval MS]
//   --announce-ms MS     interval between standalone notifications (env ANNOUNCE_MS; default 100)
//   --store own|sdk      the event store (env EVENT_STORE; default own)
//   --retry-interval MS  retry sent in priming events (env RETRY_INTERVAL_MS; default 100)
//   PORT                 listen port (default 0: any free port)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; exits 0 on SIGTERM.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { MemoryEventStore } from './lib/event-store.mjs';
import { registerSlowCount } from './lib/slow-count.mjs';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { serveStreamable } from './lib/streamable-app.mjs';

const flags = parseFlags(process.argv.slice(2));
const retryInterval = intFlag(flags, 'retry-interval', 'RETRY_INTERVAL_MS', 100);
const announceMs = intFlag(flags, 'announce-ms', 'ANNOUNCE_MS', 100);
const store = flags.store ?? process.env.EVENT_STORE ?? 'own';
if (store !== 'own' && store !== 'sdk') {
  console.error(`announcing-server: --store is own or sdk, not ${JSON.stringify(store)}`);
  process.exit(2);
}
const newEventStore = () => (store === 'sdk' ? new InMemoryEventStore() : new MemoryEventStore());

function newServer(transport) {
  const server = new McpServer({ name: 'fray-example-announcing', version: '1.0.0' }, { capabilities: { logging: {} } });
  registerSlowCount(server);
  let n = 0;
  const timer = setInterval(() => {
    if (!transport.sessionId) return;
    n++;
    server.server.sendLoggingMessage({ level: 'info', data: `announcement ${n}` }).catch(() => {});
  }, announceMs);
  const onclose = transport.onclose;
  transport.onclose = () => {
    clearInterval(timer);
    onclose?.();
  };
  return server;
}

serveStreamable({ newServer, newEventStore, retryInterval });
