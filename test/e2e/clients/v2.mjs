// e2e client on the v2 TypeScript SDK (@modelcontextprotocol/client 2.x),
// pinned to the stateless revision 2026-07-28: connect() probes with
// `server/discover` (on a disposable sibling process, as the SDK does for its
// own stdio transport) and there is no `initialize`. Prints one JSON document
// on stdout (see common.mjs).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { answerElicitation, run, serverBinary, serverURL, transportKind } from './common.mjs';

const PINNED = '2026-07-28';
// $E2E_V2_MODE=auto lets the client pick the era (it tries the stateless
// one first); otherwise the client is pinned to 2026-07-28.
const MODE = process.env.E2E_V2_MODE === 'auto' ? 'auto' : { pin: PINNED };

// $E2E_TRANSPORT: stdio (spawns $SHOWCASE_BIN) or http ($SHOWCASE_URL).
const newTransport = () =>
  transportKind() === 'http'
    ? new StreamableHTTPClientTransport(serverURL())
    : new StdioClientTransport({ command: serverBinary(), args: [], stderr: 'inherit' });

// The client can ask its user. At 2026-07-28 the server asks inside an
// input_required result; the client's multi-round-trip driver (on by
// default: inputRequired.autoFulfill) runs this same handler for each
// inputRequests entry and retries the call with inputResponses and the
// requestState, so callTool() returns the final result.
const client = new Client({ name: 'hexmcp-e2e-v2', version: '2.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: MODE } });
client.setRequestHandler('elicitation/create', answerElicitation);

await run({
  client,
  transport: newTransport(),
  bare: () => ({
    client: new Client({ name: 'hexmcp-e2e-v2-bare', version: '2.0.0' }, { capabilities: {}, versionNegotiation: { mode: MODE } }),
    transport: newTransport()
  }),
  async describe(c, tap) {
    // The connect-time probe ran on a sibling process the tap does not see:
    // send server/discover again on the session's own pipe so the handshake
    // recorded is the raw wire too.
    const mark = tap.mark();
    try {
      await c.discover();
    } catch {
      // recorded below from the wire (or as missing)
    }
    const d = tap.responsesSince(mark, 'server/discover').at(-1)?.response;
    return {
      client: { sdk: '@modelcontextprotocol/client', pinnedProtocolVersion: PINNED, era: c.getProtocolEra() ?? null },
      protocolVersion: c.getNegotiatedProtocolVersion() ?? null,
      handshake: d ? { method: 'server/discover', ...('result' in d ? { result: d.result } : { error: d.error }) } : null
    };
  },
  async listTools(c) {
    // Without a cursor the v2 client walks every page itself.
    await c.listTools();
  }
});
