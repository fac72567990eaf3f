// Lets the conformance CLI load on Node 20.
//
// @modelcontextprotocol/conformance 0.1.16 imports globSync from "fs", which
// Node added in 22. Its only use is the tier-check subcommand, which fray does
// not run; `conformance server` and `conformance list` never call it. This
// module installs a resolve hook that hands the conformance package a copy of
// "fs" with a globSync that throws, so the import succeeds and any real use
// fails loudly instead of silently doing nothing.
//
// Usage: node --import ./compat/register.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js ...
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  register('./fs-hook.mjs', import.meta.url);
}
