#!/usr/bin/env node
// The MCP Inspector's command-line client, @modelcontextprotocol/inspector-cli
// 1.0.3, as a user runs it:
//   mcp-inspector-cli URL --transport http|sse --method tools/call --tool-name NAME
//       --tool-arg k=v ... --tool-metadata progressToken=fray-inspector
// (the progress token makes the server stream progress; the inspector has
// no progress handler of its own, so the notifications are seen only on the
// wire). It checks the printed result and prints one JSON line of its own.
//
// Usage: node thirdparty/inspector-client.mjs URL --tool NAME [--arg k=v ...]
//          [--transport http|sse] [--expect TEXT] [--timeout MS]
// Prints {"ok", "error", "result"}; exits 0 on success, 1 on failure.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const url = argv[0];
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i > 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const tool = opt('tool');
if (!url || url.startsWith('--') || !tool) {
  console.error('usage: node thirdparty/inspector-client.mjs URL --tool NAME [--arg k=v ...] [--transport http|sse] [--expect TEXT] [--timeout MS]');
  process.exit(2);
}
const toolArgs = argv.flatMap((a, i) => (a === '--arg' && i + 1 < argv.length ? [argv[i + 1]] : []));
const transport = opt('transport', 'http');
const expect = opt('expect', '');
const timeoutMs = Number(opt('timeout', '20000'));

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..', 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');
const args = [cli, url, '--transport', transport, '--method', 'tools/call', '--tool-name', tool];
if (toolArgs.length > 0) args.push('--tool-arg', ...toolArgs);
args.push('--tool-metadata', 'progressToken=fray-inspector');

const summary = { ok: false, url, via: `inspector-cli ${transport}`, tool };
// inspector-cli 1.0.3 finds its package.json by testing "../package.json"
// against the working directory and then importing that path relative to
// its own module, so it only starts from a directory one level below a
// package.json: its build directory is one.
const child = spawn(process.execPath, args, { cwd: dirname(cli), stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
let err = '';
child.stdout.on('data', (c) => (out += c));
child.stderr.on('data', (c) => (err += c));
const timer = setTimeout(() => {
  summary.error = `timed out after ${timeoutMs} ms`;
  child.kill('SIGTERM');
}, timeoutMs);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('close', (code, signal) => {
  clearTimeout(timer);
  summary.exit = code ?? signal;
  summary.stderr = err.split('\n').filter(Boolean).slice(-10);
  try {
    const result = JSON.parse(out);
    summary.result = result.content?.find((c) => c.type === 'text')?.text ?? '';
    if (code !== 0) summary.error ??= `inspector-cli exited ${code ?? signal}`;
    else if (result.isError) summary.error = `tool returned an error: ${summary.result}`;
    else if (expect && !summary.result.includes(expect)) summary.error = `result ${JSON.stringify(summary.result)} does not contain ${JSON.stringify(expect)}`;
    else summary.ok = true;
  } catch (e) {
    summary.error ??= `inspector-cli exited ${code ?? signal} without a JSON result: ${out.slice(0, 200)}`;
  }
  console.log(JSON.stringify(summary));
  process.exit(summary.ok ? 0 : 1);
});
