// tsclient.mjs connects to the WebSocket endpoint given as its argument with
// WebSocketClientTransport of the official TypeScript SDK, lists the tools,
// calls "hi" and prints what it got. The SDK and ws are loaded from the
// folder named by WS_TS_CLIENT_DIR (npm i @modelcontextprotocol/sdk@1.32.2 ws).
//
//	WS_TS_CLIENT_DIR=/tmp/wsclient node tsclient.mjs ws://127.0.0.1:8080/ws
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = process.env.WS_TS_CLIENT_DIR;
const url = process.argv[2];
if (!dir || !url) {
  console.error('usage: WS_TS_CLIENT_DIR=<folder with node_modules> node tsclient.mjs <ws url>');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(dir), 'package.json'));
if (typeof globalThis.WebSocket === 'undefined') {
  globalThis.WebSocket = require('ws'); // Node 20 has no global WebSocket
}
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { WebSocketClientTransport } = require('@modelcontextprotocol/sdk/client/websocket.js');

const client = new Client({ name: 'hexmcp-ws-test', version: '1.0.0' });
const transport = new WebSocketClientTransport(new URL(url));
const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(1);
}, 20000);
try {
  await client.connect(transport);
  console.log(`protocol: ${transport._socket.protocol}`);
  console.log(`server: ${JSON.stringify(client.getServerVersion())}`);
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(',')}`);
  const result = await client.callTool({ name: 'hi', arguments: {} });
  console.log(`result: ${JSON.stringify(result)}`);
  await client.close();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
}
