// Process plumbing shared by the example servers: listen on 127.0.0.1 port 0,
// announce the URL on stdout, and shut down cleanly on SIGTERM or SIGINT.

/**
 * Starts app listening on 127.0.0.1 with an OS-chosen port (or PORT from the
 * environment) and prints "LISTENING <url>" once it accepts connections.
 *
 * @param {import('express').Express} app
 * @param {string} path the path clients use, e.g. "/mcp"
 * @param {() => Promise<void>} [onClose] closes sessions before exit
 */
export function serve(app, path, onClose = async () => {}) {
  const port = Number(process.env.PORT ?? 0);
  const server = app.listen(port, '127.0.0.1', (err) => {
    if (err) {
      console.error(`listen: ${err.message}`);
      process.exit(1);
    }
    const { port: actual } = server.address();
    console.log(`LISTENING http://127.0.0.1:${actual}${path}`);
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await onClose();
    } catch (err) {
      console.error(`close: ${err?.message ?? err}`);
    }
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return server;
}

/**
 * Reads "--name value" and "--name=value" options from argv.
 *
 * @param {string[]} argv
 * @returns {Record<string, string>}
 */
export function parseFlags(argv) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      out._.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) {
      out[a.slice(2, eq)] = a.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out[a.slice(2)] = argv[++i];
    } else {
      out[a.slice(2)] = 'true';
    }
  }
  return out;
}

/**
 * Parses a non-negative integer option, exiting with a message if it is not one.
 */
export function intFlag(flags, name, envName, fallback) {
  const raw = flags[name] ?? process.env[envName];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name}: ${JSON.stringify(raw)} is not a non-negative integer`);
    process.exit(2);
  }
  return n;
}
