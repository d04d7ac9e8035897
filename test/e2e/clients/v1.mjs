// e2e client on the v1 TypeScript SDK (@modelcontextprotocol/sdk 1.x): the
// 2025 handshake (`initialize`), requesting the SDK's latest revision,
// 2025-11-25. Prints one JSON document on stdout (see common.mjs).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { answerElicitation, run, serverBinary, serverURL, transportKind } from './common.mjs';

if (transportKind() === 'ws') {
  // Node 20 has no global WebSocket: the client takes the ws package's.
  const { WebSocket } = await import('ws');
  globalThis.WebSocket ??= WebSocket;
}

// $E2E_TRANSPORT picks the transport: stdio (spawns $SHOWCASE_BIN), http
// (Streamable HTTP at $SHOWCASE_URL), sse (the 2024-11-05 HTTP+SSE
// transport, its stream at $SHOWCASE_URL) or ws (WebSocket at
// $SHOWCASE_URL).
function newTransport() {
  switch (transportKind()) {
    case 'http':
      return new StreamableHTTPClientTransport(serverURL());
    case 'sse':
      return new SSEClientTransport(serverURL());
    case 'ws':
      return new WebSocketClientTransport(serverURL());
    default:
      return new StdioClientTransport({ command: serverBinary(), args: [], stderr: 'inherit' });
  }
}

// The client can ask its user: the server sends elicitation/create on the
// session during a tools/call, and the handler answers it.
const client = new Client({ name: 'hexmcp-e2e-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, answerElicitation);

await run({
  client,
  transport: newTransport(),
  bare: () => ({ client: new Client({ name: 'hexmcp-e2e-v1-bare', version: '1.0.0' }, { capabilities: {} }), transport: newTransport() }),
  describe(_client, tap, mark) {
    const init = tap.responsesSince(mark, 'initialize').at(-1);
    return {
      client: { sdk: '@modelcontextprotocol/sdk', requestedProtocolVersion: init?.request.params.protocolVersion ?? LATEST_PROTOCOL_VERSION },
      protocolVersion: init?.response?.result?.protocolVersion ?? null,
      handshake: { method: 'initialize', result: init?.response?.result ?? null }
    };
  },
  async listTools(c) {
    // v1's listTools() returns one page: walk the cursors ourselves.
    const all = [];
    let cursor;
    do {
      const page = await c.listTools(cursor === undefined ? undefined : { cursor });
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // listTools() caches output validators per page only: cache the union so
    // callTool() checks structuredContent against every outputSchema.
    c.cacheToolMetadata(all);
  }
});
