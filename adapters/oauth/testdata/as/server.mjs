// A real OAuth 2.0 authorization server for adapters/oauth's tests:
// oauth2-mock-server (its discovery document, JWKS, token and introspection
// endpoints, tokens signed with real keys) on 127.0.0.1 at a free port, plus
// a control endpoint on another free port through which the Go tests sign
// tokens with chosen claims, add and rotate keys, set the introspection
// answer and stop the authorization server. The first line on standard
// output is {"issuer": ..., "control": ...}. The process exits when its
// standard input closes (the test that started it ended).
import { createServer } from 'node:http';
import { OAuth2Server, Events } from 'oauth2-mock-server';

const as = new OAuth2Server();
const keys = as.issuer.keys;
let current = (await keys.generate('RS256')).kid;
const retired = new Set();
// Tokens from /token are signed with the current key (the mock's round
// robin would alternate between every key); retired keys leave the JWKS.
const get = keys.get.bind(keys);
const toJSON = keys.toJSON.bind(keys);
keys.get = (kid) => get(kid ?? current);
keys.toJSON = (priv) => toJSON(priv).filter((k) => !retired.has(k.kid));

// What a real server puts in a client-credentials access token: the client
// as subject and client_id, and the RFC 8707 resource as audience.
as.service.on(Events.BeforeTokenSigning, (token, req) => {
  const body = req.body ?? {};
  const auth = req.headers.authorization ?? '';
  let client = body.client_id;
  if (auth.startsWith('Basic ')) {
    client = decodeURIComponent(Buffer.from(auth.slice(6), 'base64').toString().split(':')[0]);
  }
  if (client !== undefined) {
    token.payload.sub = client;
    token.payload.client_id = client;
  }
  if (body.resource !== undefined) token.payload.aud = body.resource;
});

let introspection = { statusCode: 200, body: { active: true } };
const introspectAuth = [];
as.service.on(Events.BeforeIntrospect, (res, req) => {
  introspectAuth.push(req.headers.authorization ?? '');
  res.statusCode = introspection.statusCode;
  res.body = introspection.body;
});

await as.start(0, '127.0.0.1');
as.issuer.url = `http://127.0.0.1:${as.address().port}`;
const issuer = as.issuer.url;

async function readJSON(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const s = Buffer.concat(chunks).toString();
  return s === '' ? {} : JSON.parse(s);
}

const routes = {
  // {kid?, expiresIn?, header?, claims?, remove?: [names]} -> {token}
  '/sign': async (b) => {
    const token = await as.issuer.buildToken({
      kid: b.kid ?? current,
      expiresIn: b.expiresIn,
      scopesOrTransform: (header, payload) => {
        Object.assign(header, b.header ?? {});
        Object.assign(payload, b.claims ?? {});
        for (const name of b.remove ?? []) delete payload[name];
      },
    });
    return { token };
  },
  // {alg, kid?} -> {kid}: one more key in the JWKS, not the current one
  '/keys': async (b) => ({ kid: (await keys.generate(b.alg, b.kid ? { kid: b.kid } : undefined)).kid }),
  // {alg?, retire?} -> {kid, old}: a new current key; retire drops the old
  // one from the JWKS
  '/rotate': async (b) => {
    const old = current;
    current = (await keys.generate(b.alg ?? 'RS256')).kid;
    if (b.retire) retired.add(old);
    return { kid: current, old };
  },
  '/introspection': async (b) => {
    introspection = { statusCode: b.statusCode ?? 200, body: b.body };
    return {};
  },
  '/introspection-auth': async () => ({ auth: introspectAuth }),
  '/stop': async () => {
    await as.stop();
    return {};
  },
};

const control = createServer(async (req, res) => {
  try {
    const route = routes[req.url];
    if (req.method !== 'POST' || route === undefined) {
      res.writeHead(404).end();
      return;
    }
    const out = JSON.stringify(await route(await readJSON(req)));
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(out);
  } catch (err) {
    res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err?.stack ?? err));
  }
});
control.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ issuer, control: `http://127.0.0.1:${control.address().port}` }) + '\n');
});

process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
