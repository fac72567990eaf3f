// The Streamable HTTP endpoint the example servers share: one transport per
// session with an event store of its own and a retry interval (so every POST stream is
// primed, SEP-1699), 404 for an unknown session, 400 for a first request
// that is not initialize.
import { randomUUID } from 'node:crypto';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { serve } from './serve.mjs';

/**
 * Serves MCP at /mcp on 127.0.0.1 until SIGTERM.
 * @param {object} opts
 * @param {(transport: StreamableHTTPServerTransport) => import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} opts.newServer
 *   builds the server for a new session
 * @param {() => import('@modelcontextprotocol/sdk/server/streamableHttp.js').EventStore} opts.newEventStore
 *   builds the event store for a new session: a store shared by sessions
 *   replays one session's standalone stream to another (every session's is
 *   "_GET_stream")
 * @param {number} opts.retryInterval retry (ms) sent in priming events
 */
export function serveStreamable({ newServer, newEventStore, retryInterval }) {
  /** @type {Map<string, StreamableHTTPServerTransport>} */
  const sessions = new Map();
  const app = createMcpExpressApp({ host: '127.0.0.1' });

  app.all('/mcp', async (req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    try {
      if (sessionId) {
        const transport = sessions.get(sessionId);
        if (!transport) {
          res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
          return;
        }
        await transport.handleRequest(req, res, req.body);
        return;
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: no session' }, id: null });
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: newEventStore(),
        retryInterval,
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await newServer(transport).connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      console.error(`handle ${req.method}: ${err?.stack ?? err}`);
      if (!res.headersSent) {
        res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
      }
    }
  });

  serve(app, '/mcp', async () => {
    await Promise.allSettled([...sessions.values()].map((t) => t.close()));
  });
}
