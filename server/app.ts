// The plain node:http front of the Apollo server (server/apollo.ts): POST /graphql for queries; for
// browsers the plan explorer at /, the recorded runs at /calibrate and GraphiQL at /graphql, all bundled by this server
// (server/assets.ts; Apollo's default landing page loads from a CDN, which an offline machine
// cannot reach); /health (live) and /ready (server/readiness.ts); start-up and graceful shutdown. Body reading and error bodies: server/http.ts; what errors say: server/error-policy.ts.
//
// Hostile input is stopped as early as it can be: body size while reading, bracket nesting before
// parsing, tokens while parsing, depth/complexity/fields/aliases while validating (server/limits.ts),
// field values in the service layer (service/validate.ts), search size and time in the optimizer.
// Every response carries an x-request-id; every request is logged as one JSON line.
import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { learnedPredictor } from '../predictor/learned/model.js';
import { shutdownPlannerWorkers } from '../resolvers/off-thread.js';
import type { RequestContext } from '../resolvers/context.js';
import { setPriceOverrides } from '../seeds/catalog.js';
import { recommendCache } from '../service/cache.js';
import { readPriceFile, runtimeConfig, setRuntimeConfig, type ServerConfig } from '../service/config.js';
import { createApollo } from './apollo.js';
import { webAsset, webPage } from './assets.js';
import { ABORTED, drainCap, errorBody, readBody, requestIdFrom, send, TOO_LARGE } from './http.js';
import { MAX_TEXT_NESTING, textNesting, variablesRefusal } from './limits.js';
import { errorFields, log, requestStore, setLogLevel, type RequestState } from './log.js';
import { addReadinessCheck, runChecks } from './readiness.js';
import { warmUp } from './warm-up.js';
import { harnessScript } from '../service/harness-script.js';
import { InputError } from '../predictor/input-error.js';

/**
 * Makes `config` this process's configuration: the settings every layer reads, the log level and
 * the server-wide prices; answers cached under the previous settings are dropped.
 */
function applyConfiguration(config: ServerConfig): void {
  setRuntimeConfig(config);
  setLogLevel(config.logLevel);
  const prices = config.prices ? readPriceFile(config.prices) : undefined;
  setPriceOverrides(prices, `price override file ${config.prices}`);
  if (prices)
    log('info', 'price overrides loaded', { file: config.prices, gpus: Object.keys(prices).length });
  recommendCache.clear();
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
  applyConfiguration(config);
  const apollo = await createApollo(config);
  // Load the learned model before the first request; if it cannot load, answers fall back to the
  // analytical estimate (and say so), so the server is still ready.
  const learned = await learnedPredictor();
  addReadinessCheck('learnedModel', () =>
    learned.predictor ? 'ok' : `fallback to analytical: ${learned.reason}`,
  );
  if (config.warmUp) await warmUp(apollo);
  const startup = runChecks();
  if (!startup.ok) log('warn', 'not ready at startup', { checks: startup.checks });
  const startedAt = Date.now();
  let inFlight = 0;
  let draining = false;

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, state: RequestState) {
    if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', webPage('explorer'));
    if (url.pathname === '/calibrate')
      return send(res, 200, 'text/html; charset=utf-8', webPage('calibrate'));
    if (url.pathname === '/favicon.ico') return send(res, 204, 'image/x-icon', '');
    if (url.pathname === '/harness/measure.py' && req.method === 'GET')
      return harnessDownload(res, url, state);
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
      context: async () => ({
        requestId: state.requestId,
        deadlineAt: state.deadlineAt,
        arrivedAt: state.startedAt,
      }),
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
  // Open connections, which a drain waits for: one that has sent nothing yet, or whose request a
  // busy event loop has not read yet, is not idle, whatever server.closeIdleConnections thinks.
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
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
        // of 8 were reset). So: answer everything (with `connection: close`), and close the port
        // only once no connection is open after a poll phase (the check phase follows it) has
        // found no new one.
        const until = Date.now() + config.shutdownGraceMs;
        const afterPoll = () => new Promise<void>((r) => setImmediate(r));
        for (;;) {
          // Kept-alive connections idle since before the drain are left to keepAliveTimeout (5 s)
          // rather than ended here: a client may already have sent its next request on one, still
          // unread by a busy event loop, and ending it would reset that request (16 of 135 were).
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
        for (const s of sockets) s.destroy();
        await closed;
        await apollo.stop();
        // A plan still running after the grace would otherwise be cut mid-correction by the exit.
        await shutdownPlannerWorkers();
      })()),
  };
}

/**
 * GET /harness/measure.py[?model=ID[&seqLen=N]]: the measurement harness, with a zoo model
 * embedded when one is named, as `trainplan harness` writes it: a GPU machine needs only this file
 * and PyTorch. A bad parameter is a 400 naming it.
 */
function harnessDownload(res: ServerResponse, url: URL, state: RequestState): void {
  const model = url.searchParams.get('model') ?? undefined;
  const seqLen = url.searchParams.get('seqLen');
  let script: string;
  try {
    script = harnessScript(model, seqLen === null ? undefined : Number(seqLen));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return send(
      res,
      400,
      'application/json',
      errorBody(e.withField, 'BAD_USER_INPUT', state.requestId, e.field),
    );
  }
  res.writeHead(200, {
    'content-type': 'text/x-python; charset=utf-8',
    'content-disposition': 'attachment; filename="measure.py"',
  });
  res.end(script);
}
