#!/usr/bin/env node
// An MCP server on the TypeScript SDK that offers what the server scenarios
// of @modelcontextprotocol/conformance 0.1.16 call: the test_* tools,
// test://* resources, test_* prompts, completion, logging and resource
// subscriptions, over Streamable HTTP with sessions, an event store and a
// retry interval (SEP-1699). It exists so the conformance suite can be run
// against one real server directly and through fray, and the results
// compared.
//
// Usage: node conformance-server.mjs [--retry-interval MS]   (PORT: listen port, default 0)
// Prints "LISTENING http://127.0.0.1:PORT/mcp" when ready; exits 0 on SIGTERM.
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MemoryEventStore } from './lib/event-store.mjs';
import { parseFlags, intFlag } from './lib/serve.mjs';
import { serveStreamable } from './lib/streamable-app.mjs';

const flags = parseFlags(process.argv.slice(2));
const retryInterval = intFlag(flags, 'retry-interval', 'RETRY_INTERVAL_MS', 500);

// A 1x1 PNG and a minimal WAV file.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const noArgs = { type: 'object', properties: {} };

// Tools are served through the low-level handlers so that input schemas go
// out exactly as written (json_schema_2020_12_tool must keep $schema, $defs
// and additionalProperties).
const tools = [
  { name: 'test_simple_text', description: 'Returns simple text content.', inputSchema: noArgs },
  { name: 'test_image_content', description: 'Returns image content.', inputSchema: noArgs },
  { name: 'test_audio_content', description: 'Returns audio content.', inputSchema: noArgs },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource.', inputSchema: noArgs },
  { name: 'test_multiple_content_types', description: 'Returns text, image and resource content.', inputSchema: noArgs },
  { name: 'test_tool_with_logging', description: 'Sends three log notifications while it runs.', inputSchema: noArgs },
  { name: 'test_tool_with_progress', description: 'Sends progress 0, 50 and 100 of 100.', inputSchema: noArgs },
  { name: 'test_error_handling', description: 'Always fails with isError.', inputSchema: noArgs },
  { name: 'test_reconnection', description: 'Closes its SSE stream mid-call, then returns (SEP-1699).', inputSchema: noArgs },
  {
    name: 'test_sampling',
    description: 'Asks the client for an LLM completion.',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the client for user input.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  { name: 'test_elicitation_sep1034_defaults', description: 'Elicits a form whose fields have defaults (SEP-1034).', inputSchema: noArgs },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicits a form with every enum shape (SEP-1330).', inputSchema: noArgs },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Has a JSON Schema 2020-12 input schema (SEP-1613).',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
];

const sep1034Schema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Name', default: 'John Doe' },
    age: { type: 'integer', description: 'Age', default: 30 },
    score: { type: 'number', description: 'Score', default: 95.5 },
    status: { type: 'string', description: 'Status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verified', default: true },
  },
};

const sep1330Schema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First' },
        { const: 'value2', title: 'Second' },
      ],
    },
    legacyEnum: { type: 'string', enum: ['opt1', 'opt2'], enumNames: ['Option one', 'Option two'] },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First' },
          { const: 'value2', title: 'Second' },
        ],
      },
    },
  },
};

/**
 * Runs one tool call.
 * @param {string} name
 * @param {Record<string, unknown>} args
 * @param {object} extra the SDK's RequestHandlerExtra
 * @param {import("@modelcontextprotocol/sdk/server/streamableHttp.js").StreamableHTTPServerTransport} transport
 */
async function callTool(name, args, extra, transport) {
  const log = (data) => extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
  switch (name) {
    case 'test_simple_text':
      return text('This is a simple text response for testing.');
    case 'test_image_content':
      return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
    case 'test_audio_content':
      return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
    case 'test_embedded_resource':
      return {
        content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'Embedded resource content.' } }],
      };
    case 'test_multiple_content_types':
      return {
        content: [
          { type: 'text', text: 'Multiple content types test:' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' } },
        ],
      };
    case 'test_tool_with_logging':
      await log('Tool execution started');
      await sleep(50);
      await log('Tool processing data');
      await sleep(50);
      await log('Tool execution completed');
      return text('Tool with logging executed successfully');
    case 'test_tool_with_progress': {
      const token = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100 } });
        }
        if (progress < 100) await sleep(50);
      }
      return text(String(token));
    }
    case 'test_error_handling':
      return { isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }] };
    case 'test_reconnection':
      // extra.closeSSEStream is offered only to 2025-11-25 clients; the
      // scenario's raw POST says 2025-03-26, so close through the transport.
      if (extra.closeSSEStream) extra.closeSSEStream();
      else transport.closeSSEStream(extra.requestId);
      await sleep(100);
      return text('Reconnection test completed successfully.');
    case 'test_sampling': {
      const res = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }], maxTokens: 100 },
        },
        CreateMessageResultSchema,
      );
      return text(`LLM response: ${res.content?.text ?? ''}`);
    }
    case 'test_elicitation':
    case 'test_elicitation_sep1034_defaults':
    case 'test_elicitation_sep1330_enums': {
      const requestedSchema =
        name === 'test_elicitation'
          ? { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] }
          : name === 'test_elicitation_sep1034_defaults'
            ? sep1034Schema
            : sep1330Schema;
      const res = await extra.sendRequest(
        { method: 'elicitation/create', params: { mode: 'form', message: String(args.message ?? 'Please fill in the form'), requestedSchema } },
        ElicitResultSchema,
      );
      return text(`User response: action=${res.action}, content=${JSON.stringify(res.content ?? {})}`);
    }
    case 'json_schema_2020_12_tool':
      return text(`Hello ${args.name ?? 'nobody'}`);
    default:
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
  }
}

/** @param {import("@modelcontextprotocol/sdk/server/streamableHttp.js").StreamableHTTPServerTransport} transport */
function newServer(transport) {
  const mcp = new McpServer(
    { name: 'fray-example-conformance', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  const server = mcp.server;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) =>
    callTool(req.params.name, req.params.arguments ?? {}, { ...extra, _meta: req.params._meta }, transport),
  );
  const subscriptions = new Set();
  server.setRequestHandler(SubscribeRequestSchema, async (req) => (subscriptions.add(req.params.uri), {}));
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => (subscriptions.delete(req.params.uri), {}));

  mcp.registerResource('static-text', 'test://static-text', { description: 'A text resource', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }));
  mcp.registerResource('static-binary', 'test://static-binary', { description: 'A binary resource', mimeType: 'image/png' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  mcp.registerResource('watched-resource', 'test://watched-resource', { description: 'A resource to subscribe to', mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }],
  }));
  mcp.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'A templated resource', mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );

  mcp.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  mcp.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: {
        arg1: completable(z.string().describe('First argument'), (v) => ['paris', 'park', 'party'].filter((s) => s.startsWith(v ?? ''))),
        arg2: z.string().describe('Second argument'),
      },
    },
    async ({ arg1, arg2 }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  mcp.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'A prompt that embeds a resource', argsSchema: { resourceUri: z.string().describe('URI to embed') } },
    async ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  mcp.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
  return mcp;
}

const newEventStore = () => new MemoryEventStore();

serveStreamable({ newServer, newEventStore, retryInterval });
