// The Apollo server and the plain node:http front that serves it: POST /graphql for queries; for
// browsers the plan explorer at / and GraphiQL at /graphql, both bundled by this server
// (server/assets.ts; Apollo's default landing page loads from a CDN, which an offline machine
// cannot reach); /health (live) and /ready (seeds and models loaded, not draining).
//
// Hostile input is stopped as early as it can be: body size while reading, bracket nesting before
// parsing, tokens while parsing, depth/complexity/fields/aliases while validating (server/limits.ts),
// field values in the service layer (service/validate.ts), search size and time in the optimizer.
// Every response carries an x-request-id; every request is logged as one JSON line.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { ApolloServer, HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { Kind, type GraphQLFormattedError, type OperationDefinitionNode } from 'graphql';
import { trainplanSchema } from './schema.js';
import { webAsset, webPage } from './assets.js';
import { learnedPredictor } from '../predictor/learned/model.js';
import {
  DEFAULTS,
  readPriceFile,
  runtimeConfig,
  setRuntimeConfig,
  type ServerConfig,
} from '../service/config.js';
import { errorFields, log, requestStore, setLogLevel, type RequestState } from './log.js';
import { cappedMessage, MAX_TEXT_NESTING, queryShapeRule, textNesting, variablesRefusal } from './limits.js';
import type { RequestContext } from '../resolvers/context.js';
import { recommendCache } from '../service/cache.js';
import { loadEfficiency, loadGpus, networkDefaults, setPriceOverrides } from '../seeds/catalog.js';
import { loadZoo } from '../predictor/zoo/index.js';

/** The default body limit (TRAINPLAN_MAX_BODY_BYTES overrides it). */
export const MAX_BODY_BYTES = DEFAULTS.maxBodyBytes;

const isDev = () => process.env.NODE_ENV === 'development';

/**
 * A fault of the server, not of the request: an error without a code (or INTERNAL_SERVER_ERROR)
 * that code threw. graphql-js's own complaints about a request (a mutation on a schema without
 * mutations, too many variable errors) are GraphQLErrors without an original error: the request's fault.
 */
export function isServerFault(formatted: GraphQLFormattedError, error?: unknown): boolean {
  const code = formatted.extensions?.code;
  if (code !== undefined && code !== 'INTERNAL_SERVER_ERROR') return false;
  const e = error as { name?: string; originalError?: { name?: string } | null } | undefined;
  if (!e || e.name !== 'GraphQLError') return true;
  return !!e.originalError && e.originalError.name !== 'GraphQLError';
}

/** Outside development, a server fault becomes "internal error" and the request id; the details go to the log only. */
export function formatError(formatted: GraphQLFormattedError, error?: unknown): GraphQLFormattedError {
  formatted = { ...formatted, message: cappedMessage(formatted.message) };
  const requestId = requestStore.getStore()?.requestId;
  const id = requestId ? { requestId } : {};
  if (isServerFault(formatted, error)) {
    if (isDev()) return { ...formatted, extensions: { ...formatted.extensions, ...id } };
    return {
      message: `internal error${requestId ? ` (request id ${requestId})` : ''}`,
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: { code: 'INTERNAL_SERVER_ERROR', ...id },
    };
  }
  const code = formatted.extensions?.code;
  return {
    ...formatted,
    extensions: {
      ...formatted.extensions,
      code: code === undefined || code === 'INTERNAL_SERVER_ERROR' ? 'BAD_REQUEST' : code,
      ...id,
    },
  };
}

const rootFieldNames = (op: OperationDefinitionNode | undefined) =>
  op?.selectionSet.selections.map((s) => (s.kind === Kind.FIELD ? s.name.value : '...')).join(',');

/** Names the operation for the access log and logs every GraphQL error with the request id. */
const observability: ApolloServerPlugin<RequestContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation(rc) {
        const state = requestStore.getStore();
        if (state)
          state.operationName =
            rc.operationName ??
            (rootFieldNames(rc.operation) ? `{${rootFieldNames(rc.operation)}}` : undefined);
      },
      async didEncounterErrors(rc) {
        for (const e of rc.errors) {
          if (!isServerFault({ message: e.message, extensions: e.extensions }, e))
            log('debug', 'request error', {
              code: e.extensions?.code ?? 'BAD_REQUEST',
              error: e.message.slice(0, 500),
              operationName: rc.operationName,
            });
          else
            log('error', 'internal error', {
              operationName: rc.operationName,
              path: e.path?.join('.'),
              ...errorFields(e.originalError ?? e),
            });
        }
      },
    };
  },
};

export async function createApollo(
  config: ServerConfig = runtimeConfig(),
): Promise<ApolloServer<RequestContext>> {
  const server = new ApolloServer<RequestContext>({
    schema: await trainplanSchema(),
    plugins: [ApolloServerPluginLandingPageDisabled(), observability],
    includeStacktraceInErrorResponses: isDev(),
    // server/serve.ts drains on SIGTERM; Apollo's own handler would stop it mid-request.
    stopOnTerminationSignals: false,
    parseOptions: { maxTokens: config.maxTokens },
    validationRules: [queryShapeRule(config)],
    formatError,
    logger: {
      debug: (m) => log('debug', String(m)),
      info: (m) => log('info', String(m)),
      warn: (m) => log('warn', String(m)),
      error: (m) => log('error', String(m)),
    },
  });
  await server.start();
  return server;
}

/** A client's x-request-id if it is a sane token, else a fresh UUID. */
function requestIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && /^[\w.:-]{1,128}$/.test(v) ? v : randomUUID();
}

/** Past this many bytes an oversized body is no longer drained: the connection is cut. */
const drainCap = (max: number) => 4 * max + 16_000_000;

const TOO_LARGE = Symbol('too large');
const ABORTED = Symbol('aborted');
/**
 * The body as text; TOO_LARGE when it passes `max` bytes; ABORTED when the client went away.
 * An oversized body is read to its end and dropped (a client that is still sending would
 * otherwise see a reset instead of the 413), up to drainCap; beyond that the connection is cut.
 */
function readBody(req: IncomingMessage, max: number): Promise<string | typeof TOO_LARGE | typeof ABORTED> {
  return new Promise((resolve) => {
    let size = 0;
    let chunks: Buffer[] | null = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (chunks && size > max) chunks = null;
      if (chunks) chunks.push(c);
      else if (size > drainCap(max)) {
        req.destroy();
        resolve(TOO_LARGE);
      }
    });
    req.on('end', () => resolve(chunks ? Buffer.concat(chunks).toString('utf8') : TOO_LARGE));
    req.on('error', () => resolve(ABORTED));
    req.on('close', () => {
      if (!req.complete) resolve(ABORTED);
    });
  });
}

const errorBody = (message: string, code: string, requestId?: string, field?: string) =>
  JSON.stringify({
    errors: [
      { message, extensions: { code, ...(field ? { field } : {}), ...(requestId ? { requestId } : {}) } },
    ],
  });

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
) {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers });
  res.end(body);
}

/** Extra readiness checks (a learned model, say): a check that throws or returns false keeps /ready at 503. */
const readinessChecks = new Map<string, () => unknown>([
  ['gpus', () => loadGpus().length > 0],
  ['models', () => loadZoo().length > 0],
  ['efficiency', () => Object.keys(loadEfficiency()).length > 0],
  ['network', () => networkDefaults() !== undefined],
]);
export function addReadinessCheck(name: string, check: () => unknown): void {
  readinessChecks.set(name, check);
}
function runChecks(): { ok: boolean; checks: Record<string, string> } {
  const checks: Record<string, string> = {};
  let ok = true;
  for (const [name, check] of readinessChecks) {
    // A string is a passing check with something to say (e.g. the learned model's fallback).
    try {
      const r = check();
      checks[name] = r === false ? 'failing' : typeof r === 'string' ? r : 'ok';
      ok &&= r !== false;
    } catch (e) {
      checks[name] = `failing: ${(e as Error).message}`.slice(0, 200);
      ok = false;
    }
  }
  return { ok, checks };
}

export interface Running {
  server: Server;
  apollo: ApolloServer<RequestContext>;
  url: string;
  config: ServerConfig;
  /** Requests being handled now. */
  inFlight(): number;
  /**
   * Graceful: /ready fails at once while requests are still served (shutdownDelayMs, so a load
   * balancer stops sending), then the port closes and every accepted request finishes (up to
   * shutdownGraceMs) before the remaining connections are closed.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server; port 0 picks a free one. `overrides` replace the configuration this
 * process was given (service/config.ts); they become the process's configuration.
 */
export async function startServer(
  port = 4000,
  host = '0.0.0.0',
  overrides: Partial<ServerConfig> = {},
): Promise<Running> {
  const config: ServerConfig = { ...runtimeConfig(), ...overrides, port, host };
  setRuntimeConfig(config);
  setLogLevel(config.logLevel);
  const prices = config.prices ? readPriceFile(config.prices) : undefined;
  setPriceOverrides(prices, `price override file ${config.prices}`);
  if (prices)
    log('info', 'price overrides loaded', { file: config.prices, gpus: Object.keys(prices).length });
  recommendCache.clear();
  const apollo = await createApollo(config);
  // Load the learned model before the first request; if it cannot load, answers fall back to the
  // analytical estimate (and say so), so the server is still ready.
  const learned = await learnedPredictor();
  addReadinessCheck('learnedModel', () =>
    learned.predictor ? 'ok' : `fallback to analytical: ${learned.reason}`,
  );
  const startup = runChecks();
  if (!startup.ok) log('warn', 'not ready at startup', { checks: startup.checks });
  const startedAt = Date.now();
  let inFlight = 0;
  let draining = false;

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, state: RequestState) {
    if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', webPage('explorer'));
    if (url.pathname === '/favicon.ico') return send(res, 204, 'image/x-icon', '');
    if (
      url.pathname === '/graphql' &&
      req.method === 'GET' &&
      (req.headers.accept ?? '').includes('text/html') &&
      !url.searchParams.has('query')
    )
      return send(res, 200, 'text/html; charset=utf-8', webPage('graphiql'));
    if (url.pathname.startsWith('/assets/') && req.method === 'GET') {
      const asset = await webAsset(url.pathname);
      if (!asset)
        return send(res, 404, 'application/json', errorBody('no such asset', 'NOT_FOUND', state.requestId));
      res.writeHead(200, { 'content-type': asset.contentType, 'cache-control': 'no-cache' });
      return res.end(asset.body);
    }
    if (url.pathname !== '/graphql')
      return send(
        res,
        404,
        'application/json',
        errorBody('not found: POST GraphQL to /graphql', 'NOT_FOUND', state.requestId),
      );
    const declared = Number(req.headers['content-length']);
    const body =
      req.method === 'POST'
        ? declared > drainCap(config.maxBodyBytes)
          ? TOO_LARGE
          : await readBody(req, config.maxBodyBytes)
        : '';
    if (body === ABORTED) {
      log('debug', 'client went away while sending');
      return;
    }
    if (body === TOO_LARGE) {
      return send(
        res,
        413,
        'application/json',
        errorBody(`request body larger than ${config.maxBodyBytes} bytes`, 'BAD_USER_INPUT', state.requestId),
        { connection: 'close' },
      );
    }
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    let parsed: unknown = body;
    if (req.method === 'POST' && (headers.get('content-type') ?? '').includes('application/json')) {
      try {
        parsed = JSON.parse(body);
      } catch {
        return send(
          res,
          400,
          'application/json',
          errorBody('request body is not valid JSON', 'BAD_REQUEST', state.requestId),
        );
      }
    }
    // Checked before GraphQL coerces them: coercion's errors print whole objects (amplification).
    const refusal = variablesRefusal((parsed as { variables?: unknown } | null)?.variables);
    if (refusal)
      return send(
        res,
        400,
        'application/json',
        errorBody(refusal.message, 'BAD_USER_INPUT', state.requestId, refusal.path),
      );
    const query =
      req.method === 'POST' ? (parsed as { query?: unknown } | null)?.query : url.searchParams.get('query');
    if (typeof query === 'string' && textNesting(query, MAX_TEXT_NESTING) > MAX_TEXT_NESTING) {
      return send(
        res,
        400,
        'application/json',
        errorBody(
          `query nests brackets more than ${MAX_TEXT_NESTING} deep`,
          'GRAPHQL_PARSE_FAILED',
          state.requestId,
        ),
      );
    }
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body: parsed },
      context: async () => ({ requestId: state.requestId, deadlineAt: state.deadlineAt }),
    });
    for (const [k, v] of result.headers) res.setHeader(k, v);
    res.statusCode = result.status ?? 200;
    if (draining) res.setHeader('connection', 'close');
    if (result.body.kind === 'complete') return res.end(result.body.string);
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  }

  function probe(res: ServerResponse, path: string, requestId: string) {
    if (path === '/health') return send(res, 200, 'application/json', '{"status":"ok"}');
    const { ok, checks } = runChecks();
    const mem = process.memoryUsage();
    const body = {
      status: draining ? 'draining' : ok ? 'ready' : 'not ready',
      pid: process.pid,
      requestId,
      uptimeS: Math.round((Date.now() - startedAt) / 1000),
      inFlight,
      memory: { rssMb: Math.round(mem.rss / 2 ** 20), heapUsedMb: Math.round(mem.heapUsed / 2 ** 20) },
      cache: recommendCache.stats(),
      checks,
    };
    send(res, ok && !draining ? 200 : 503, 'application/json', JSON.stringify(body));
  }

  // Node checks headersTimeout and requestTimeout only every connectionsCheckingInterval (30 s by
  // default): a client sending partial headers was cut after 25-37 s, not the documented 10 s.
  const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
    const startedAt = performance.now();
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.setHeader('x-request-id', requestId);
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      url = new URL('http://localhost/invalid');
    }
    const isProbe = url.pathname === '/health' || url.pathname === '/ready';
    const state: RequestState = { requestId, startedAt, deadlineAt: startedAt + config.timeBudgetMs };
    if (!isProbe) inFlight++;
    res.once('close', () => {
      if (!isProbe) inFlight--;
      log(isProbe ? 'debug' : 'info', 'request', {
        requestId,
        method: req.method,
        path: url.pathname.slice(0, 200),
        operationName: state.operationName,
        status: res.statusCode,
        durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    });
    if (isProbe) return probe(res, url.pathname, requestId);
    // While draining, requests are still answered (an accepted request is never dropped); their
    // answers close the connection so clients reconnect elsewhere.
    if (draining) res.setHeader('connection', 'close');
    const socket = sockets.get(req.socket);
    if (socket) socket.requests++;
    res.once('close', () => {
      if (socket) {
        socket.requests--;
        socket.served++;
      }
    });
    if (inFlight > config.maxInFlight)
      return send(
        res,
        503,
        'application/json',
        errorBody(
          `busy: more than ${config.maxInFlight} requests in flight; retry`,
          'UNAVAILABLE',
          requestId,
        ),
        { 'retry-after': '1' },
      );
    requestStore.run(state, () => {
      handle(req, res, url, state).catch((e) => {
        log('error', 'request failed', errorFields(e));
        send(
          res,
          500,
          'application/json',
          errorBody(`internal error (request id ${requestId})`, 'INTERNAL_SERVER_ERROR', requestId),
        );
      });
    });
  });
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(10_000, config.requestTimeoutMs);
  server.keepAliveTimeout = 5_000;
  // Open connections: a connection that has sent nothing yet (or whose request this process has
  // not read yet, on a busy event loop) is not idle, whatever server.closeIdleConnections thinks.
  const sockets = new Map<Socket, { requests: number; served: number }>();
  server.on('connection', (s: Socket) => {
    sockets.set(s, { requests: 0, served: 0 });
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const actual = typeof addr === 'object' && addr ? addr.port : port;
  let closing: Promise<void> | undefined;
  return {
    server,
    apollo,
    config,
    url: `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host}:${actual}/graphql`,
    inFlight: () => inFlight,
    close: () =>
      (closing ??= (async () => {
        draining = true;
        await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
        // The port stays open until every connection is done. A busy event loop accepts queued
        // connections one poll at a time, and closing a listening socket resets the connections
        // still in the kernel's queue: accepted by TCP, the client already sent its request (3-7
        // of 8 were reset). So: answer everything (with `connection: close`), close kept-alive
        // connections that are idle, and close the port only once no connection is open after a
        // poll phase (the check phase follows it) has found no new one.
        const until = Date.now() + config.shutdownGraceMs;
        const afterPoll = () => new Promise<void>((r) => setImmediate(r));
        for (;;) {
          for (const [s, st] of sockets) if (st.requests === 0 && st.served > 0) s.end();
          if (Date.now() >= until) break;
          if (sockets.size === 0) {
            await afterPoll();
            if (sockets.size === 0) break;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
        // net's close, not http's: since Node 19 http.Server.close() also runs
        // closeIdleConnections(), which destroys connections whose request is not read yet.
        const closed = new Promise<void>((done) => NetServer.prototype.close.call(server, () => done()));
        if (sockets.size > 0)
          log('warn', 'shutdown grace over; closing connections', { inFlight, connections: sockets.size });
        server.closeAllConnections();
        for (const s of sockets.keys()) s.destroy();
        await closed;
        await apollo.stop();
      })()),
  };
}
