// The Apollo server and the plain node:http front that serves it: POST /graphql for queries, a
// local query page for browsers (Apollo's default landing page loads from a CDN, which an offline
// machine cannot reach), and /health.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { trainplanSchema } from './schema.js';

export const MAX_BODY_BYTES = 1_000_000;

export async function createApollo(): Promise<ApolloServer> {
  const server = new ApolloServer({
    schema: await trainplanSchema(),
    plugins: [ApolloServerPluginLandingPageDisabled()],
    includeStacktraceInErrorResponses: process.env.NODE_ENV === 'development',
  });
  await server.start();
  return server;
}

const page = () => readFileSync(new URL('./page.html', import.meta.url), 'utf8');

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) { resolve(null); req.resume(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, type: string, body: string) {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

async function handle(apollo: ApolloServer, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/health') return send(res, 200, 'application/json', '{"status":"ok"}');
  if (url.pathname === '/' || (url.pathname === '/graphql' && req.method === 'GET' && (req.headers.accept ?? '').includes('text/html') && !url.searchParams.has('query'))) {
    return send(res, 200, 'text/html; charset=utf-8', page());
  }
  if (url.pathname !== '/graphql') return send(res, 404, 'application/json', '{"error":"not found: POST GraphQL to /graphql"}');
  const body = req.method === 'POST' ? await readBody(req) : '';
  if (body === null) return send(res, 413, 'application/json', JSON.stringify({ errors: [{ message: `request body larger than ${MAX_BODY_BYTES} bytes`, extensions: { code: 'BAD_USER_INPUT' } }] }));
  const headers = new HeaderMap();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  let parsed: unknown = body;
  if (req.method === 'POST' && (headers.get('content-type') ?? '').includes('application/json')) {
    try { parsed = JSON.parse(body); } catch {
      return send(res, 400, 'application/json', JSON.stringify({ errors: [{ message: 'request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] }));
    }
  }
  const result = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body: parsed },
    context: async () => ({}),
  });
  for (const [k, v] of result.headers) res.setHeader(k, v);
  res.statusCode = result.status ?? 200;
  if (result.body.kind === 'complete') return res.end(result.body.string);
  for await (const chunk of result.body.asyncIterator) res.write(chunk);
  res.end();
}

export interface Running { server: Server; apollo: ApolloServer; url: string; close(): Promise<void> }

/** Starts the HTTP server; port 0 picks a free one. */
export async function startServer(port = 4000, host = '0.0.0.0'): Promise<Running> {
  const apollo = await createApollo();
  const server = createServer((req, res) => {
    handle(apollo, req, res).catch((e) => {
      console.error(JSON.stringify({ level: 'error', msg: 'request failed', error: String(e) }));
      if (!res.headersSent) send(res, 500, 'application/json', '{"errors":[{"message":"internal error"}]}');
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  return {
    server, apollo, url: `http://localhost:${actual}/graphql`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await apollo.stop();
    },
  };
}
