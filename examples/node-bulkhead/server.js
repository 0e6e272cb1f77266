// A small HTTP service that is not ours: Node.js, standard library only.
//
// GET /a calls dependency A, GET /b calls dependency B, both over HTTP. Every call takes a slot
// of a concurrency limit first:
//
//   --mode shared   one limit of P slots for both dependencies ("shared")
//   --mode split    P/2 slots per dependency ("A" and "B")
//
// A call that finds its limit full is answered 503 at once (no queue). A dependency call that
// takes longer than the client timeout is abandoned and answered 504; a dependency that fails or
// answers a non-2xx status gives 502. Nothing here sends X-Bulkhead-* headers: a harness must
// classify by status code.
//
// GET /metrics serves the limits in the Prometheus text format under Resilience4j's bulkhead
// names and labels (resilience4j_bulkhead_available_concurrent_calls and
// resilience4j_bulkhead_max_allowed_concurrent_calls, label name), so anything that reads a
// Resilience4j service reads this one. GET /healthz answers 200 once the server listens.
//
// Usage:
//
//   node server.js --mode shared|split [--size P] [--port N] [--host H]
//                  [--a URL] [--b URL] [--timeout MS]
//
// --a and --b default to the environment variables DEP_A_URL and DEP_B_URL; --port 0 (the
// default) picks a free port. Once listening it prints one line "listening http://HOST:PORT" on
// stdout. SIGTERM and SIGINT close the server and exit 0.
'use strict';

const http = require('node:http');

function parseArgs(argv) {
  const opts = {
    mode: '',
    size: 10,
    port: 0,
    host: '127.0.0.1',
    a: process.env.DEP_A_URL || '',
    b: process.env.DEP_B_URL || '',
    timeout: 500,
  };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const val = argv[i + 1];
    if (!key.startsWith('--') || val === undefined) {
      throw new Error(`argument ${i + 1} (${key}): want --name value pairs`);
    }
    const name = key.slice(2);
    if (!(name in opts)) {
      throw new Error(`unknown flag ${key}`);
    }
    i++;
    if (typeof opts[name] === 'number') {
      const n = Number(val.replace(/ms$/, ''));
      if (!Number.isInteger(n) || n < 0) {
        throw new Error(`${key} ${val}: want a whole number >= 0`);
      }
      opts[name] = n;
    } else {
      opts[name] = val;
    }
  }
  if (opts.mode !== 'shared' && opts.mode !== 'split') {
    throw new Error(`--mode ${JSON.stringify(opts.mode)}: want shared or split`);
  }
  if (opts.size < 2) {
    throw new Error(`--size ${opts.size}: want at least 2 (split gives each dependency size/2)`);
  }
  if (opts.timeout <= 0) {
    throw new Error(`--timeout ${opts.timeout}: want a positive number of milliseconds`);
  }
  for (const dep of ['a', 'b']) {
    try {
      const u = new URL(opts[dep]);
      if (u.protocol !== 'http:') throw new Error('not http');
    } catch (e) {
      throw new Error(`--${dep} ${JSON.stringify(opts[dep])}: want an http:// URL (or set DEP_${dep.toUpperCase()}_URL)`);
    }
  }
  return opts;
}

// Limit is a non-blocking semaphore: tryAcquire takes a slot or returns false.
class Limit {
  constructor(name, size) {
    this.name = name;
    this.size = size;
    this.inUse = 0;
  }
  tryAcquire() {
    if (this.inUse >= this.size) return false;
    this.inUse++;
    return true;
  }
  release() {
    this.inUse--;
  }
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`server.js: ${e.message}\n`);
    process.exit(2);
  }

  const limits = [];
  const limitOf = {};
  if (opts.mode === 'shared') {
    const l = new Limit('shared', opts.size);
    limits.push(l);
    limitOf.A = l;
    limitOf.B = l;
  } else {
    for (const dep of ['A', 'B']) {
      const l = new Limit(dep, Math.floor(opts.size / 2));
      limits.push(l);
      limitOf[dep] = l;
    }
  }
  const deps = { '/a': { name: 'A', url: opts.a }, '/b': { name: 'B', url: opts.b } };
  // Keep-alive with no socket cap, so the limit, not the agent, is what runs out.
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

  function answer(res, status, text) {
    if (res.headersSent) return;
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text + '\n');
  }

  // call makes one dependency call and answers res; done runs exactly once when it ends.
  function call(dep, res, done) {
    let finished = false;
    const finish = (status, text) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      answer(res, status, text);
      done();
    };
    const req = http.get(dep.url, { agent }, (up) => {
      up.resume();
      up.on('end', () => {
        if (up.statusCode >= 200 && up.statusCode < 300) finish(200, 'ok');
        else finish(502, `dependency ${dep.name} answered ${up.statusCode}`);
      });
      up.on('error', (e) => finish(502, `dependency ${dep.name}: ${e.message}`));
    });
    const timer = setTimeout(() => {
      finish(504, `dependency ${dep.name} timed out after ${opts.timeout} ms`);
      req.destroy();
    }, opts.timeout);
    req.on('error', (e) => finish(502, `dependency ${dep.name}: ${e.message}`));
    // The client gave up: stop the call and free the slot.
    res.on('close', () => {
      if (!finished) {
        finished = true;
        clearTimeout(timer);
        req.destroy();
        done();
      }
    });
  }

  function metrics() {
    const lines = [
      '# HELP resilience4j_bulkhead_available_concurrent_calls The number of available permissions',
      '# TYPE resilience4j_bulkhead_available_concurrent_calls gauge',
    ];
    for (const l of limits) {
      lines.push(`resilience4j_bulkhead_available_concurrent_calls{name="${l.name}"} ${l.size - l.inUse}`);
    }
    lines.push(
      '# HELP resilience4j_bulkhead_max_allowed_concurrent_calls The maximum number of available permissions',
      '# TYPE resilience4j_bulkhead_max_allowed_concurrent_calls gauge',
    );
    for (const l of limits) {
      lines.push(`resilience4j_bulkhead_max_allowed_concurrent_calls{name="${l.name}"} ${l.size}`);
    }
    return lines.join('\n') + '\n';
  }

  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    if (req.method !== 'GET') {
      answer(res, 405, 'GET only');
      return;
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metrics());
      return;
    }
    if (path === '/healthz') {
      answer(res, 200, 'ok');
      return;
    }
    const dep = deps[path];
    if (!dep) {
      answer(res, 404, 'not found');
      return;
    }
    const limit = limitOf[dep.name];
    if (!limit.tryAcquire()) {
      answer(res, 503, `limit ${limit.name} full`);
      return;
    }
    call(dep, res, () => limit.release());
  });
  server.keepAliveTimeout = 65000;

  server.on('error', (e) => {
    process.stderr.write(`server.js: listen ${opts.host}:${opts.port}: ${e.message}\n`);
    process.exit(1);
  });
  server.listen(opts.port, opts.host, () => {
    const { address, port } = server.address();
    process.stdout.write(`listening http://${address}:${port}\n`);
  });

  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    agent.destroy();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
