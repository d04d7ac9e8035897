// Shared driver of the e2e clients (v1.mjs, v2.mjs).
//
// Each client spawns the showcase server named by $SHOWCASE_BIN over stdio,
// lists its tools (every page) and calls every tool with fixed arguments, then
// prints ONE JSON document on stdout. What it records is the raw wire: the
// transport is tapped (see tapTransport) so results are the JSON-RPC `result`
// / `error` members exactly as the server sent them, not the SDK's
// post-processed view.
//
// Both clients declare the elicitation capability and answer every
// elicitation with ELICITATION_ANSWER (see answerElicitation): in the
// handshake era the server sends elicitation/create on the session, in the
// stateless era it answers input_required and the client retries. A second,
// bare client without the capability calls bookTable and resetCounter once
// more (doc.withoutElicitation). resetCounter is destructive: the showcase
// asks the user to confirm it (middleware.ConfirmDestructive), and the
// clients answer the first such question accept and the second decline
// (DESTRUCTIVE_ANSWERS).

/** The fixed argument sets per tool, in the order they are called. */
export const CALL_PLAN = {
  calculate: [
    { a: 6, b: 3, operation: 'multiply' },
    { a: 1, b: 0, operation: 'divide' }, // tool error: Division by zero
    { a: 6, b: 3, operation: 'modulo' } // input validation error (not in the enum)
  ],
  get_weather: [{ city: 'Paris' }],
  divideNumbers: [
    { a: 1, b: 0 }, // tool error
    { a: 9, b: 3 }
  ],
  bookTable: [{ time: '19:30' }], // asks the user: answered with ELICITATION_ANSWER
  resetCounter: [{}, {}] // asks the user to confirm: accepted, then declined (DESTRUCTIVE_ANSWERS)
  // every other tool: [{}]
};

/** What the user "answers" to every elicitation: the form bookTable asks for. */
export const ELICITATION_ANSWER = { action: 'accept', content: { name: 'Ada', seating: 'terrace', quiet: true } };

/** The answers to the confirmations of destructive tools, in turn. */
export const DESTRUCTIVE_ANSWERS = [{ action: 'accept', content: { confirm: true } }, { action: 'decline' }];
let destructiveAsked = 0;

/**
 * The clients' elicitation/create handler (registered with the client's
 * setRequestHandler; the v2 client also runs it for the inputRequests of an
 * input_required result). It accepts with the fixed answer, except the
 * confirmation of a destructive tool, answered from DESTRUCTIVE_ANSWERS in
 * turn.
 */
export async function answerElicitation(request) {
  const message = request?.params?.message ?? request?.message ?? '';
  if (message.includes('is marked destructive')) {
    return structuredClone(DESTRUCTIVE_ANSWERS[destructiveAsked++ % DESTRUCTIVE_ANSWERS.length]);
  }
  return structuredClone(ELICITATION_ANSWER);
}

/** The transport to use: stdio (default), http, sse (the 2024-11-05 HTTP+SSE transport) or ws, from $E2E_TRANSPORT. */
export function transportKind() {
  return process.env.E2E_TRANSPORT || 'stdio';
}

/** The server's URL for the network transports, or exit 1 when it is not given. */
export function serverURL() {
  const url = process.env.SHOWCASE_URL;
  if (!url) {
    process.stderr.write('SHOWCASE_URL is not set: point it at a running showcase (http://…/mcp, http://…/sse or ws://…/ws)\n');
    process.exit(1);
  }
  return new URL(url);
}

/** The server binary, or exit 1 when it is not given. */
export function serverBinary() {
  const bin = process.env.SHOWCASE_BIN;
  if (!bin) {
    process.stderr.write('SHOWCASE_BIN is not set: point it at a built examples/showcase binary\n');
    process.exit(1);
  }
  return bin;
}

/**
 * Tap a transport: every request the client sends and every response it
 * receives is recorded, the response deep-copied the moment the transport
 * hands it over (before the Protocol layer or the Client sees it).
 *
 * send() is wrapped on the instance, and onmessage is turned into an accessor
 * so that whatever handler the SDK installs (whenever it installs it) is
 * called through the tap. The transport's class is left untouched, so SDK
 * code that inspects the prototype (the v2 client's stdio probe) sees the
 * SDK's own transport.
 */
export function tapTransport(transport) {
  const sent = []; // outgoing JSON-RPC requests, in order
  const responses = new Map(); // id -> raw JSON-RPC response (result or error)
  const incoming = []; // server-to-client requests (elicitation/create, ...), in order
  const answers = new Map(); // id -> the client's raw response to a server-to-client request
  const origSend = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message && typeof message === 'object' && 'id' in message) {
      if ('method' in message) sent.push(structuredClone(message));
      else answers.set(message.id, structuredClone(message));
    }
    return origSend(message, options);
  };
  let inner;
  const tapped = (message, extra) => {
    if (message && typeof message === 'object' && 'id' in message) {
      if ('method' in message) incoming.push(structuredClone(message));
      else responses.set(message.id, structuredClone(message));
    }
    return inner?.(message, extra);
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (inner ? tapped : undefined),
    set: (fn) => {
      inner = fn;
    }
  });
  return {
    mark: () => sent.length,
    incomingMark: () => incoming.length,
    /** Raw responses to the requests of `method` sent since `mark`, in send order. */
    responsesSince(mark, method, predicate = () => true) {
      return sent
        .slice(mark)
        .filter((m) => m.method === method && predicate(m))
        .map((m) => ({ request: m, response: responses.get(m.id) }));
    },
    /**
     * Server-to-client requests received since `mark` (of incomingMark),
     * each with the client's raw answer; ids are left out (they number the
     * server's requests, not this scenario's).
     */
    incomingSince(mark) {
      return incoming.slice(mark).map((m) => {
        const out = { method: m.method };
        if ('params' in m) out.params = m.params;
        const a = answers.get(m.id);
        if (a && 'result' in a) out.answer = { result: a.result };
        else if (a && 'error' in a) out.answer = { error: wireError(a) };
        return out;
      });
    }
  };
}

function errorOf(err) {
  const out = { code: err?.code ?? null, message: String(err?.message ?? err) };
  if (err?.data !== undefined) out.data = err.data;
  return out;
}

/** The wire error of a raw response, every member kept. */
function wireError(response) {
  return { ...response.error };
}

/**
 * Call one tool through the SDK and record the raw wire outcome:
 * - `result`: the JSON-RPC result as sent by the server;
 * - `error`: the JSON-RPC error as sent by the server;
 * - `clientError`: the SDK threw although the server answered with a result
 *   (e.g. its output-schema check failed); the raw result is kept beside it;
 * - `error` with `clientSide: true`: the SDK threw and nothing came back.
 */
async function callOne(client, tap, name, args) {
  const mark = tap.mark();
  const incomingMark = tap.incomingMark();
  let thrown;
  try {
    await client.callTool({ name, arguments: args });
  } catch (err) {
    thrown = err;
  }
  const exchanges = tap.responsesSince(mark, 'tools/call', (m) => m.params?.name === name);
  const last = exchanges.at(-1)?.response;
  const entry = { name, arguments: args };
  if (last && 'result' in last) {
    entry.result = last.result;
    if (thrown) entry.clientError = errorOf(thrown);
  } else if (last && 'error' in last) {
    entry.error = wireError(last);
  } else {
    entry.error = { ...errorOf(thrown ?? new Error('no response on the wire')), clientSide: true };
  }
  if (exchanges.length > 1) entry.wireExchanges = exchanges.length;
  // Handshake era: what the server asked the client during the call.
  const asked = tap.incomingSince(incomingMark);
  if (asked.length > 0) entry.serverRequests = asked;
  // Stateless era: the input_required rounds before the final result, and
  // what the client sent back on each retry. requestState is opaque (signed,
  // with an expiry): only whether the retry echoed it byte for byte is kept.
  const rounds = [];
  for (let i = 0; i + 1 < exchanges.length; i++) {
    const res = exchanges[i].response;
    if (res?.result?.resultType !== 'input_required') continue;
    const { requestState, ...rest } = res.result;
    const round = { result: { ...rest, ...(requestState !== undefined && { requestState: '(opaque)' }) } };
    const retry = exchanges[i + 1].request.params ?? {};
    round.retry = { inputResponses: retry.inputResponses ?? null, requestStateEchoed: requestState !== undefined && retry.requestState === requestState };
    rounds.push(round);
  }
  if (rounds.length > 0) entry.inputRounds = rounds;
  return entry;
}

/**
 * Run the whole scenario and print the document.
 *
 * @param {object} o
 * @param {object} o.client        SDK Client
 * @param {object} o.transport     SDK StdioClientTransport (not yet started)
 * @param {(client, tap) => Promise<void>} o.listTools  list every page (through the SDK)
 * @param {(client, tap, mark) => Promise<{protocolVersion, handshake}>} o.describe  after connect
 * @param {() => {client, transport}} o.bare  a new client without the elicitation capability, and its transport
 */
export async function run({ client, transport, listTools, describe, bare }) {
  const tap = tapTransport(transport);
  const connectMark = tap.mark();
  try {
    await client.connect(transport);
  } catch (err) {
    process.stderr.write(`failed to connect to ${process.env.SHOWCASE_URL ?? process.env.SHOWCASE_BIN}: ${err?.stack ?? err}\n`);
    process.exit(1);
  }
  const doc = { ...(await describe(client, tap, connectMark)) };

  // tools/list: every page, raw.
  const listMark = tap.mark();
  let listError;
  try {
    await listTools(client, tap);
  } catch (err) {
    listError = err;
  }
  const pages = tap.responsesSince(listMark, 'tools/list').map((x) => x.response);
  const tools = [];
  doc.toolsListPages = pages.map((p) => {
    if (p && 'result' in p) {
      tools.push(...(p.result.tools ?? []));
      return { ...p.result, tools: (p.result.tools ?? []).map((t) => t.name) };
    }
    return { error: p ? wireError(p) : { message: 'no response on the wire', clientSide: true } };
  });
  if (listError) doc.toolsListError = errorOf(listError);
  doc.tools = tools;

  // tools/call: every listed tool, then every planned tool that was not listed,
  // except those named in $E2E_SKIP_TOOLS (comma-separated; test/cluster leaves
  // out what a cluster of instances cannot serve yet).
  const skipped = new Set((process.env.E2E_SKIP_TOOLS ?? '').split(',').filter(Boolean));
  const names = tools.map((t) => t.name);
  for (const planned of Object.keys(CALL_PLAN)) if (!names.includes(planned)) names.push(planned);
  doc.calls = [];
  for (const name of names) {
    if (skipped.has(name)) continue;
    for (const args of CALL_PLAN[name] ?? [{}]) {
      try {
        doc.calls.push(await callOne(client, tap, name, args));
      } catch (err) {
        doc.calls.push({ name, arguments: args, error: { ...errorOf(err), clientSide: true } });
      }
    }
  }

  // bookTable and resetCounter from a client that cannot ask the user: a
  // tool error each, not a question.
  doc.withoutElicitation = [];
  if (bare) {
    const b = bare();
    const bareTap = tapTransport(b.transport);
    try {
      await b.client.connect(b.transport);
      for (const args of CALL_PLAN.bookTable) doc.withoutElicitation.push(await callOne(b.client, bareTap, 'bookTable', args));
      doc.withoutElicitation.push(await callOne(b.client, bareTap, 'resetCounter', {}));
    } catch (err) {
      doc.withoutElicitation.push({ name: 'bookTable', error: { ...errorOf(err), clientSide: true } });
    }
    await Promise.race([b.client.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())]);
  }

  // $E2E_CONCURRENT=N: N calls of calculate at once on the same session
  // (a · 2 for a = 1…N), their answers in doc.concurrent in call order.
  const concurrent = Number(process.env.E2E_CONCURRENT ?? 0);
  if (concurrent > 0) {
    const calls = Array.from({ length: concurrent }, (_, i) =>
      client
        .callTool({ name: 'calculate', arguments: { a: i + 1, b: 2, operation: 'multiply' } })
        .then((res) => ({ a: i + 1, text: res.content?.[0]?.text ?? null }))
        .catch((err) => ({ a: i + 1, error: errorOf(err) }))
    );
    doc.concurrent = await Promise.all(calls);
  }

  await new Promise((resolve) => process.stdout.write(JSON.stringify(doc, null, 2) + '\n', resolve));
  const closing = client.close().catch(() => {});
  await Promise.race([closing, new Promise((r) => setTimeout(r, 5000).unref())]);
  process.exit(0);
}
