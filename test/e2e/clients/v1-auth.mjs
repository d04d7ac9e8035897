// e2e client on the v1 TypeScript SDK (@modelcontextprotocol/sdk 1.x) against
// a showcase that is an OAuth 2.1 protected resource (-auth-issuer): Streamable
// HTTP at $SHOWCASE_URL, the authorization server at $E2E_AUTH_ISSUER.
//
// $E2E_AUTH picks how the client authenticates:
//   oauth   the SDK's own OAuth support: StreamableHTTPClientTransport with
//           the SDK's ClientCredentialsProvider (client_credentials, client
//           id hexmcp-e2e, scope $E2E_AUTH_SCOPE). On the first 401 the SDK
//           reads resource_metadata from WWW-Authenticate, fetches the
//           protected resource metadata (RFC 9728), then the authorization
//           server's metadata, asks the token endpoint and retries.
//   none    no credentials at all;
//   bearer  the token in $E2E_AUTH_TOKEN, sent by the transport as a fixed
//           Authorization header (requestInit.headers).
//
// It connects (initialize), lists the tools and calls calculate once
// ({a:6,b:3,operation:"multiply"}), then prints one JSON document on stdout:
//
//   { "mode": "...",
//     "exchanges": [ every HTTP exchange the SDK made, in the order it made
//       them: {method, url, requestHeaders, requestBody, status,
//       responseHeaders, responseBody} (bodies of text/event-stream
//       responses are not read) ],
//     "connectError": {...} when connect() threw,
//     "initialize", "toolsList", "call": the raw JSON-RPC responses (tapped,
//       see common.mjs),
//     "tokens": what the provider saved (oauth) }
//
// The exchanges are recorded by the fetch function the transport is given
// (its `fetch` option, which the SDK uses for the MCP requests and for every
// OAuth request alike): what crossed the wire, not the SDK's view of it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

import { serverURL, tapTransport } from './common.mjs';

const mode = process.env.E2E_AUTH || 'oauth';

/** Headers (a Headers, an array of pairs or a record) as a record, names in lower case. */
function headersOf(h) {
  return Object.fromEntries([...new Headers(h ?? {}).entries()]);
}

const exchanges = [];

/** fetch, recording each exchange (the response body read from a clone). */
async function recordingFetch(input, init = {}) {
  const isRequest = typeof input === 'object' && input !== null && 'method' in input && 'url' in input;
  const entry = {
    method: init.method ?? (isRequest ? input.method : 'GET'),
    url: String(isRequest ? input.url : input),
    requestHeaders: headersOf(init.headers ?? (isRequest ? input.headers : undefined)),
    requestBody: init.body === undefined || init.body === null ? null : String(init.body)
  };
  exchanges.push(entry);
  let response;
  try {
    response = await fetch(input, init);
  } catch (err) {
    entry.fetchError = String(err?.message ?? err);
    throw err;
  }
  entry.status = response.status;
  entry.responseHeaders = headersOf(response.headers);
  const type = response.headers.get('content-type') ?? '';
  entry.responseBody = type.startsWith('text/event-stream') ? '(event stream)' : await response.clone().text();
  return response;
}

let provider;
const options = { fetch: recordingFetch };
switch (mode) {
  case 'oauth':
    provider = new ClientCredentialsProvider({
      clientId: 'hexmcp-e2e',
      clientSecret: 'hexmcp-e2e-secret',
      expectedIssuer: process.env.E2E_AUTH_ISSUER,
      scope: process.env.E2E_AUTH_SCOPE || undefined
    });
    options.authProvider = provider;
    break;
  case 'bearer':
    options.requestInit = { headers: { Authorization: `Bearer ${process.env.E2E_AUTH_TOKEN}` } };
    break;
  case 'none':
    break;
  default:
    process.stderr.write(`E2E_AUTH=${mode}: want oauth, none or bearer\n`);
    process.exit(1);
}

const transport = new StreamableHTTPClientTransport(serverURL(), options);
const tap = tapTransport(transport);
const client = new Client({ name: 'hexmcp-e2e-v1-auth', version: '1.0.0' }, { capabilities: {} });
const doc = { mode };

function errorOf(err) {
  const out = { name: err?.constructor?.name ?? null, code: err?.code ?? null, message: String(err?.message ?? err) };
  return out;
}

const mark = tap.mark();
let connected = false;
try {
  await client.connect(transport);
  connected = true;
} catch (err) {
  doc.connectError = errorOf(err);
}
doc.initialize = tap.responsesSince(mark, 'initialize').at(-1)?.response ?? null;
if (connected) {
  const listMark = tap.mark();
  try {
    await client.listTools();
  } catch (err) {
    doc.toolsListError = errorOf(err);
  }
  doc.toolsList = tap.responsesSince(listMark, 'tools/list').at(-1)?.response ?? null;
  const callMark = tap.mark();
  try {
    await client.callTool({ name: 'calculate', arguments: { a: 6, b: 3, operation: 'multiply' } });
  } catch (err) {
    doc.callError = errorOf(err);
  }
  doc.call = tap.responsesSince(callMark, 'tools/call').at(-1)?.response ?? null;
}
if (provider) doc.tokens = provider.tokens() ?? null;
doc.exchanges = exchanges;

await new Promise((resolve) => process.stdout.write(JSON.stringify(doc, null, 2) + '\n', resolve));
await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())]);
process.exit(0);
