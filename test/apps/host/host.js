// The host page of the MCP Apps browser test (bundled by esbuild when the
// test runs). It is an MCP client of the showcase (Streamable HTTP at /mcp,
// which the test's server proxies) that declares the UI extension, and a
// web host of the ext-apps AppBridge: it finds the tool with a view, reads
// the view's ui:// resource, calls the tool as a model would, renders the
// view in a sandbox proxy of another origin (sandbox.html), gives the view
// the call's input and result, and proxies the view's tools/call to the
// server, writing each proxied call into the page.
//
// Query: mode=legacy (initialize, 2025-11-25) or mode=<revision> (pinned
// stateless era); sandbox=<URL of sandbox.html>.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
  getToolUiResourceUri,
  isToolVisibilityModelOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const EXTENSION_ID = "io.modelcontextprotocol/ui";
const HOST_INFO = { name: "hexmcp-apps-test-host", version: "1.0.0" };

const query = new URLSearchParams(location.search);
const mode = query.get("mode") === "legacy" ? "legacy" : { pin: query.get("mode") };
const sandboxURL = query.get("sandbox");

const log = (line) => {
  document.getElementById("log").textContent += line + "\n";
};
const setStatus = (s) => {
  document.getElementById("status").textContent = s;
};

// The test awaits window.hostReady: what the host saw, once the view is
// initialized and has the tool's result.
window.hostReady = run().catch((err) => {
  setStatus("error: " + err.message);
  log(String(err.stack || err));
  throw err;
});

async function run() {
  const client = new Client(HOST_INFO, {
    capabilities: { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } },
    versionNegotiation: { mode },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));
  const settings = client.getServerCapabilities()?.extensions?.[EXTENSION_ID];
  log("server UI extension settings: " + JSON.stringify(settings));
  if (!settings?.mimeTypes?.includes(RESOURCE_MIME_TYPE)) {
    throw new Error("the server does not advertise " + EXTENSION_ID + " with " + RESOURCE_MIME_TYPE);
  }

  const { tools } = await client.listTools();
  const tool = tools.find((t) => getToolUiResourceUri(t));
  if (!tool) throw new Error("no listed tool has a view");
  const uri = getToolUiResourceUri(tool);
  log(`tool ${tool.name} has the view ${uri}`);

  const { resources } = await client.listResources();
  const listed = resources.find((r) => r.uri === uri);
  const { contents } = await client.readResource({ uri });
  const content = contents[0];
  if (content?.mimeType !== RESOURCE_MIME_TYPE || typeof content.text !== "string") {
    throw new Error("the view is not text/html;profile=mcp-app text: " + JSON.stringify(content?.mimeType));
  }
  // The contents' _meta.ui wins over the listed resource's.
  const ui = content._meta?.ui ?? listed?._meta?.ui ?? {};

  // The model's call that opens the view.
  const args = { count: 41 };
  const result = await client.callTool({ name: tool.name, arguments: args });
  log("model call result: " + JSON.stringify(result.content));

  const iframe = document.createElement("iframe");
  iframe.id = "sandbox";
  iframe.sandbox = "allow-scripts allow-same-origin";
  iframe.src = sandboxURL + "?host=" + encodeURIComponent(location.origin);
  document.getElementById("view").append(iframe);

  const bridge = new AppBridge(null, HOST_INFO, { serverTools: {}, logging: {} }, {
    hostContext: { theme: "light", displayMode: "inline", platform: "web", locale: "en-US" },
  });
  // Views call tools through the host, which checks the tool's visibility.
  bridge.oncalltool = async (params) => {
    const target = tools.find((t) => t.name === params.name);
    if (!target || isToolVisibilityModelOnly(target)) {
      throw new Error(`the view may not call ${params.name}`);
    }
    const res = await client.callTool(params);
    const li = document.createElement("li");
    li.textContent = `${params.name} ${JSON.stringify(params.arguments)} -> ${JSON.stringify(res.structuredContent)}`;
    document.getElementById("calls").append(li);
    return res;
  };
  bridge.onloggingmessage = (p) => log("view log: " + JSON.stringify(p));
  bridge.onsandboxready = () => {
    bridge.sendSandboxResourceReady({ html: content.text, csp: ui.csp, permissions: ui.permissions });
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  setStatus("view ready");
  return {
    tool: tool.name,
    resourceUri: uri,
    legacyResourceUri: tool._meta?.[RESOURCE_URI_META_KEY] ?? null,
    mimeType: content.mimeType,
    csp: ui.csp ?? null,
    prefersBorder: ui.prefersBorder ?? null,
    modelText: result.content?.[0]?.text ?? null,
    appVersion: bridge.getAppVersion() ?? null,
  };
}
