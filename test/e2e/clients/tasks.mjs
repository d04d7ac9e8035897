// e2e client of the tasks extension (SEP-2663, io.modelcontextprotocol/tasks)
// on the official TypeScript tasks client, @modelcontextprotocol/ext-tasks,
// over the v2 TypeScript SDK (@modelcontextprotocol/client) pinned to
// 2026-07-28, against the showcase over Streamable HTTP ($SHOWCASE_URL).
//
// 1. A task session (createTaskSessionFromClient) calls buildReport
//    {sections:4, stepMs:100}: the execution must be a task; it is settled
//    and its outcome recorded (task id, the task views observed, the result).
// 2. The session calls buildReport {sections:50, stepMs:500} and cancels it
//    by its id (session.cancelTask); the outcome and a last tasks/get
//    snapshot are recorded.
// 3. A plain v2 client without the extension calls buildReport
//    {sections:2, stepMs:10}: it must answer synchronously.
//
// At 2026-07-28 the SDK's own request path does not carry the tasks wire
// shapes (a tools/call answered resultType "task", tasks/*), so ext-tasks
// needs a host request coordinator (rawDispatch) and the request framing.
// The coordinator here sends raw JSON-RPC requests with its own ids on the
// client's transport (so the transport derives the MCP-Protocol-Version,
// Mcp-Method and Mcp-Name headers from the body, as for any request) and
// takes their responses off the transport before the SDK's Protocol layer
// sees them. Every message it sends and receives is recorded, each request
// with the headers and status of its HTTP exchange: the document carries the
// raw wire (`wire`) beside what ext-tasks made of it.
//
// Prints ONE JSON document on stdout.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { DispatchError, createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

import { serverURL, tapTransport } from './common.mjs';

const PINNED = '2026-07-28';
const CLIENT_INFO = { name: 'hexmcp-e2e-tasks', version: '2.0.0' };
const CLIENT_CAPABILITIES = {};

/** The calls of the scenario (the Go test checks the texts they imply). */
export const TASK_ARGS = { sections: 4, stepMs: 100 };
export const CANCEL_ARGS = { sections: 50, stepMs: 500 };
export const PLAIN_ARGS = { sections: 2, stepMs: 10 };

function errorOf(err) {
  const out = { name: err?.name ?? null, message: String(err?.message ?? err) };
  if (err?.code !== undefined) out.code = err.code;
  if (err?.data !== undefined) out.data = err.data;
  if (err?.cause !== undefined) out.cause = String(err.cause?.message ?? err.cause);
  return out;
}

/**
 * The host request coordinator: dispatch(request, options) sends request
 * (ext-tasks' framed JSON-RPC request without id) on transport with an id of
 * its own ("ext-tasks-N", which the SDK's numeric ids never are) and
 * resolves with the response as ext-tasks wants it: {kind:"result", result}
 * or {kind:"error", error}. Responses to those ids are consumed here; every
 * other message goes on to the SDK. `log` is every message this coordinator
 * sent or received, in order, and the notifications the server sent.
 */
function coordinator(transport) {
  const pending = new Map(); // id -> {resolve, reject}
  const log = [];
  let next = 0;
  let inner;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (inner ? route : undefined),
    set: (fn) => {
      inner = fn;
    }
  });
  function route(message, extra) {
    if (message && typeof message === 'object' && !('method' in message) && pending.has(message.id)) {
      log.push({ direction: 'received', message: structuredClone(message) });
      const p = pending.get(message.id);
      pending.delete(message.id);
      p.resolve(message);
      return;
    }
    if (message && typeof message === 'object' && 'method' in message && !('id' in message)) {
      log.push({ direction: 'received', message: structuredClone(message) });
    }
    return inner?.(message, extra);
  }
  async function dispatch(request, options = {}) {
    const id = `ext-tasks-${++next}`;
    const message = { jsonrpc: '2.0', id, ...request };
    log.push({ direction: 'sent', message: structuredClone(message) });
    const response = new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
    });
    const signal = options.signal;
    let onAbort;
    const aborted = new Promise((_, reject) => {
      if (!signal) return;
      onAbort = () => {
        pending.delete(id);
        reject(signal.reason ?? new Error('aborted'));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([
        transport.send(message, {
          ...(options.context?.headers === undefined ? {} : { headers: options.context.headers }),
          ...(signal === undefined ? {} : { requestSignal: signal })
        }),
        aborted
      ]);
    } catch (err) {
      pending.delete(id);
      if (signal) signal.removeEventListener('abort', onAbort);
      if (signal?.aborted) throw err;
      throw new DispatchError(`sending ${request.method} failed`, false, { cause: err });
    }
    try {
      const raw = await Promise.race([response, aborted]);
      if ('error' in raw) return { kind: 'error', error: raw.error };
      return { kind: 'result', result: raw.result };
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
    }
  }
  return { dispatch, log };
}

/** The first text of a CallToolResult, or null. */
function textOf(result) {
  const block = (result?.content ?? []).find((c) => c?.type === 'text');
  return block ? block.text : null;
}

/** What a TaskView tells (raw kept aside: it is in the wire log). */
function viewOf(task) {
  if (!task) return null;
  const out = { taskId: task.taskId, status: task.status };
  if (task.statusMessage !== undefined) out.statusMessage = task.statusMessage;
  if (task.pollIntervalMs !== undefined) out.pollIntervalMs = task.pollIntervalMs;
  out.retentionMs = task.retentionMs;
  return out;
}

/** The outcome of a settlement, JSON-ready. */
function outcomeOf(outcome) {
  const out = { status: outcome.status };
  if (outcome.status === 'completed') out.result = outcome.result;
  if (outcome.status === 'failed') out.error = errorOf(outcome.error);
  if (outcome.task) out.task = viewOf(outcome.task);
  return out;
}

const doc = { client: { sdk: '@modelcontextprotocol/client', tasks: '@modelcontextprotocol/ext-tasks', pinnedProtocolVersion: PINNED } };

// The HTTP exchange of each request, by its JSON-RPC id: the standard
// headers the transport derived from the body and the response's status.
const httpExchanges = new Map();
async function recordingFetch(url, init) {
  const response = await fetch(url, init);
  let body;
  try {
    body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
  } catch {
    body = undefined;
  }
  if (body && !Array.isArray(body) && 'id' in body && 'method' in body) {
    const headers = new Headers(init.headers);
    const exchange = { httpMethod: init.method, status: response.status, contentType: response.headers.get('content-type') };
    for (const name of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) if (headers.has(name)) exchange[name] = headers.get(name);
    httpExchanges.set(body.id, exchange);
  }
  return response;
}

const transport = new StreamableHTTPClientTransport(serverURL(), { fetch: recordingFetch });
const coord = coordinator(transport);
const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, versionNegotiation: { mode: { pin: PINNED } } });
try {
  await client.connect(transport);
} catch (err) {
  process.stderr.write(`failed to connect to ${process.env.SHOWCASE_URL}: ${err?.stack ?? err}\n`);
  process.exit(1);
}
doc.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
doc.era = client.getProtocolEra() ?? null;
doc.serverCapabilities = client.getServerCapabilities() ?? null;

let session;
try {
  session = createTaskSessionFromClient(client, {
    endpointId: 'hexmcp-showcase-e2e',
    rawDispatch: coord.dispatch,
    v2RequestFraming: { protocolVersion: PINNED, clientInfo: CLIENT_INFO, clientCapabilities: CLIENT_CAPABILITIES },
    onError: (err) => {
      (doc.sessionErrors ??= []).push(errorOf(err));
    }
  });
  doc.sessionCapabilities = session.capabilities;
} catch (err) {
  doc.sessionError = errorOf(err);
}

if (session) {
  // 1. A task, settled.
  const first = { arguments: TASK_ARGS };
  doc.task = first;
  try {
    const execution = await session.callTool('buildReport', TASK_ARGS);
    first.kind = execution.kind;
    if (execution.kind === 'task') first.taskId = execution.handle.taskId;
    first.events = [];
    const settlement = await execution.settle({
      onEvent: (event) => {
        first.events.push(event.type === 'task' ? { type: 'task', task: viewOf(event.task) } : { type: 'outcome', status: event.outcome.status });
      }
    });
    first.outcome = outcomeOf(settlement.outcome);
    first.lastTask = viewOf(settlement.lastTask);
    try {
      first.text = textOf(resultFromTaskOutcome(settlement.outcome));
    } catch (err) {
      first.resultError = errorOf(err);
    }
  } catch (err) {
    first.error = errorOf(err);
  }

  // 2. A long task, cancelled by its id through the session.
  const long = { arguments: CANCEL_ARGS };
  doc.cancelled = long;
  try {
    const execution = await session.callTool('buildReport', CANCEL_ARGS);
    long.kind = execution.kind;
    if (execution.kind === 'task') {
      const taskId = execution.handle.taskId;
      long.taskId = taskId;
      long.events = [];
      const settling = execution.settle({
        onEvent: (event) => {
          long.events.push(event.type === 'task' ? { type: 'task', task: viewOf(event.task) } : { type: 'outcome', status: event.outcome.status });
        }
      });
      try {
        await session.cancelTask(taskId);
        long.cancelAcknowledged = true;
      } catch (err) {
        long.cancelError = errorOf(err);
      }
      const settlement = await settling;
      long.outcome = outcomeOf(settlement.outcome);
      long.lastTask = viewOf(settlement.lastTask);
      // What tasks/get says of it afterwards, through a task controller.
      try {
        long.snapshot = viewOf(await session.task(taskId).snapshot());
      } catch (err) {
        long.snapshotError = errorOf(err);
      }
    } else {
      long.outcome = outcomeOf((await execution.settle()).outcome);
    }
  } catch (err) {
    long.error = errorOf(err);
  }

  try {
    await session.close();
  } catch (err) {
    doc.closeError = errorOf(err);
  }
}
doc.wire = coord.log.map((entry) =>
  entry.direction === 'sent' && httpExchanges.has(entry.message.id) ? { ...entry, http: httpExchanges.get(entry.message.id) } : entry
);

// 3. A plain client, without the extension: a synchronous result.
const plainTransport = new StreamableHTTPClientTransport(serverURL());
const plainTap = tapTransport(plainTransport);
const plain = new Client({ name: 'hexmcp-e2e-tasks-plain', version: '2.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: PINNED } } });
doc.plain = { arguments: PLAIN_ARGS };
try {
  await plain.connect(plainTransport);
  const mark = plainTap.mark();
  try {
    doc.plain.sdkResult = await plain.callTool({ name: 'buildReport', arguments: PLAIN_ARGS });
  } catch (err) {
    doc.plain.clientError = errorOf(err);
  }
  const exchanges = plainTap.responsesSince(mark, 'tools/call');
  doc.plain.wireExchanges = exchanges.length;
  const last = exchanges.at(-1);
  if (last) {
    doc.plain.request = last.request;
    if (last.response && 'result' in last.response) doc.plain.result = last.response.result;
    else if (last.response && 'error' in last.response) doc.plain.error = last.response.error;
  }
  doc.plain.text = textOf(doc.plain.result);
} catch (err) {
  doc.plain.error = { ...errorOf(err), clientSide: true };
}

await new Promise((resolve) => process.stdout.write(JSON.stringify(doc, null, 2) + '\n', resolve));
await Promise.race([Promise.all([client.close().catch(() => {}), plain.close().catch(() => {})]), new Promise((r) => setTimeout(r, 5000).unref())]);
process.exit(0);
