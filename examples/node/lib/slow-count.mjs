// The "slow-count" tool shared by the Streamable HTTP example servers.
import { z } from 'zod';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Registers slow-count on server: it counts to `count`, sending one progress
 * notification per step `delayMs` apart, and after `closeAfter` steps asks the
 * transport to close the request's SSE stream (SEP-1699), so the client has to
 * reconnect with Last-Event-ID to see the remaining steps and the result.
 *
 * @param {import('@modelcontextprotocol/sdk/server/mcp.js').McpServer} server
 */
export function registerSlowCount(server) {
  server.registerTool(
    'slow-count',
    {
      description:
        'Counts to count with one progress notification per step; closes the SSE stream after closeAfter steps.',
      inputSchema: {
        count: z.number().int().min(1).max(1000).default(6),
        closeAfter: z.number().int().min(0).default(3),
        delayMs: z.number().int().min(0).max(10000).default(20),
      },
    },
    async ({ count, closeAfter, delayMs }, extra) => {
      const token = extra._meta?.progressToken;
      let closed = false;
      for (let i = 1; i <= count; i++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: count, message: `step ${i} of ${count}` },
          });
        }
        if (i === closeAfter && extra.closeSSEStream) {
          // Undefined when the transport has no event store or the client
          // speaks a revision before 2025-11-25: then the call just runs on.
          extra.closeSSEStream();
          closed = true;
        }
        await sleep(delayMs);
      }
      return {
        content: [{ type: 'text', text: `counted to ${count}` }],
        structuredContent: { counted: count, streamClosed: closed },
      };
    },
  );
}
