#!/usr/bin/env node
// supergateway 4.0.0 bridging server-everything's stdio mode to HTTP:
// "streamableHttp" (the default here) runs it as
//   supergateway --stdio "<server-everything> stdio" --outputTransport streamableHttp --stateful
// (sessions; the SDK's StreamableHTTPServerTransport with no event store, so
// no event ids), "sse" as --outputTransport sse (/sse and /message).
//
// Usage: node thirdparty/supergateway.mjs [streamableHttp|sse]
// supergateway listens on every interface (express app.listen(port)) with no
// host option; here --port is 0 (PORT overrides) and the listen is pinned to
// 127.0.0.1 (lib/loopback.mjs). Prints "LISTENING http://127.0.0.1:PORT/mcp"
// (or /sse) when ready; SIGTERM ends it and the child.
import { createRequire } from 'node:module';
import { pinLoopback } from './lib/loopback.mjs';

const mode = process.argv[2] ?? 'streamableHttp';
if (mode !== 'streamableHttp' && mode !== 'sse') {
  console.error(`usage: supergateway.mjs [streamableHttp|sse], not ${JSON.stringify(mode)}`);
  process.exit(2);
}
const require = createRequire(import.meta.url);
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const args = ['--stdio', `${JSON.stringify(process.execPath)} ${JSON.stringify(everything)} stdio`, '--port', process.env.PORT ?? '0', '--outputTransport', mode];
if (mode === 'streamableHttp') args.push('--stateful');
pinLoopback(mode === 'sse' ? '/sse' : '/mcp');
process.argv = [process.argv[0], 'supergateway', ...args];
await import('supergateway/dist/index.js');
