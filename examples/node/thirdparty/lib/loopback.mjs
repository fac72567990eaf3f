// Keeps a third-party server on loopback and says where it listens.
//
// Several of the packages run here bind every interface and offer no way to
// choose the host: server-everything calls app.listen(PORT) and supergateway
// app.listen(port), both on express, which means "::". Others (mcp-proxy,
// fastmcp) take a host but default to "::". So before a package is loaded,
// net.Server.prototype.listen is wrapped: every TCP listen in this process is
// given host 127.0.0.1 (the port is left as the package chose it, 0 where the
// launcher asked for any free port), and the first server that comes up is
// announced on stdout as "LISTENING http://127.0.0.1:PORT<path>", the line
// examples/interop waits for. A server that still ends up anywhere but
// 127.0.0.1 stops the process: a test must never open a port to the network.
import net from 'node:net';

const LOOPBACK = '127.0.0.1';

/**
 * Pins every later TCP listen of this process to 127.0.0.1 and announces the
 * first one with path appended to its URL.
 *
 * @param {string} path the MCP endpoint path clients use, e.g. "/mcp"
 */
export function pinLoopback(path) {
  const listen = net.Server.prototype.listen;
  let announced = false;
  net.Server.prototype.listen = function pinnedListen(...args) {
    const pinned = pinArgs(args);
    this.once('listening', () => {
      const addr = this.address();
      if (addr === null || typeof addr === 'string') return; // a Unix socket or a pipe
      if (addr.address !== LOOPBACK) {
        console.error(`loopback: a server bound ${addr.address}:${addr.port}, not ${LOOPBACK}`);
        process.exit(3);
      }
      if (!announced) {
        announced = true;
        console.log(`LISTENING http://${LOOPBACK}:${addr.port}${path}`);
      }
    });
    return listen.apply(this, pinned);
  };
}

// pinArgs rewrites the arguments of net.Server#listen so that a TCP listen
// goes to 127.0.0.1: listen(options[, cb]), listen(port[, host][, backlog][, cb]),
// listen() and listen(cb). A listen on a path (Unix socket) or a handle is
// left alone.
function pinArgs(args) {
  const [first, ...rest] = args;
  if (first !== null && typeof first === 'object') {
    if (first.path !== undefined || first.handle !== undefined || first.fd !== undefined || first._handle !== undefined) {
      return args;
    }
    return [{ ...first, host: LOOPBACK }, ...rest];
  }
  if (first === undefined || typeof first === 'function') {
    return [0, LOOPBACK, ...args.filter((a) => typeof a === 'function')];
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) {
    return args; // a Unix socket path
  }
  const cb = rest.filter((a) => typeof a === 'function');
  const backlog = rest.find((a) => typeof a === 'number');
  return backlog === undefined ? [Number(first), LOOPBACK, ...cb] : [Number(first), LOOPBACK, backlog, ...cb];
}
