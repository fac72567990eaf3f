#!/usr/bin/env node
// The client half of `fray run`: runs streamable-client.mjs's scenario
// (initialize, list tools, call slow-count with a progress token, check
// every progress notification and the result) against the endpoint fray
// hands over in FRAY_URL.
//
// Usage: fray run --upstream URL [...] -- node fray-run-client.mjs [--count N] [--close-after K] ...
// Takes the options of streamable-client.mjs; exits as it does (0 ok, 1 failure).
if (!process.env.FRAY_URL) {
  console.error('fray-run-client: FRAY_URL is not set; run it under `fray run`');
  process.exit(2);
}
process.env.MCP_URL = process.env.FRAY_URL;
await import('./streamable-client.mjs');
