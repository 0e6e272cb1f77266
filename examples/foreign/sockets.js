// sockets.js: a Node.js service (standard library only) whose only scarce resource is its HTTP
// agents' sockets. No limiter, no queue of its own: each request to /a calls dependency A, each
// to /b calls B, through http.Agent, which queues a call that finds no free socket until one is
// freed (agent.requests, unbounded). --layout shared gives both dependencies one agent with
// maxTotalSockets = --sockets; split gives each its own agent with half of them (maxSockets).
//
// Every response says what happened, in the service's own words (X-Reason):
//   200                     the dependency answered
//   504 late-socket         the --timeout ran out and the call got its socket late (after a
//                           tenth of the timeout) or never: it spent its time waiting inside
//   504 dependency          the --timeout ran out while the dependency was answering a call
//                           that got its socket at once
//   502 reset|refused|error the dependency's connection failed
// /metrics (Prometheus text): per agent the sockets in use, the budget and the calls waiting,
// and the event loop's delay:
//   node_agent_sockets_active{agent}, node_agent_sockets_max{agent}, node_agent_requests_pending{agent}
//   nodejs_eventloop_lag_seconds
'use strict';
const http = require('node:http');
const { monitorEventLoopDelay } = require('node:perf_hooks');

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const port = Number(args.port);
const timeout = Number(args.timeout || 500);
const sockets = Number(args.sockets || 10);
const deps = { A: args.a, B: args.b };

const agents = {};
if (args.layout === 'shared') {
  const agent = new http.Agent({ keepAlive: true, maxTotalSockets: sockets, maxSockets: sockets });
  agents.agent = agent;
  deps.agentOf = () => 'agent';
} else {
  agents.A = new http.Agent({ keepAlive: true, maxSockets: sockets / 2 });
  agents.B = new http.Agent({ keepAlive: true, maxSockets: sockets / 2 });
  deps.agentOf = (d) => d;
}

const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();

function count(obj) {
  let n = 0;
  for (const k of Object.keys(obj)) n += obj[k].length;
  return n;
}

function metrics() {
  const lines = [];
  for (const [name, a] of Object.entries(agents)) {
    lines.push(`node_agent_sockets_active{agent="${name}"} ${count(a.sockets)}`);
    lines.push(`node_agent_sockets_max{agent="${name}"} ${args.layout === 'shared' ? sockets : sockets / 2}`);
    lines.push(`node_agent_requests_pending{agent="${name}"} ${count(a.requests)}`);
  }
  lines.push(`nodejs_eventloop_lag_seconds ${(lag.mean / 1e9).toFixed(6)}`);
  lag.reset();
  return lines.join('\n') + '\n';
}

function answer(res, status, reason, body) {
  if (res.headersSent) return;
  const h = { 'Content-Type': 'text/plain' };
  if (reason) h['X-Reason'] = reason;
  res.writeHead(status, h);
  res.end(body || reason || 'ok');
}

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') return answer(res, 200, '', 'ok');
  if (req.url === '/metrics') return answer(res, 200, '', metrics());
  const dep = req.url.startsWith('/a') ? 'A' : req.url.startsWith('/b') ? 'B' : '';
  if (!dep) return answer(res, 404, '', 'not found');
  const start = Date.now();
  let socketAt = -1; // ms after start the call got its socket
  const call = http.get(`http://${deps[dep]}/`, { agent: agents[deps.agentOf(dep)] }, (up) => {
    let body = '';
    up.on('data', (c) => { body += c; });
    up.on('end', () => { clearTimeout(timer); answer(res, up.statusCode >= 500 ? 502 : 200, up.statusCode >= 500 ? 'status-' + up.statusCode : '', body); });
    up.on('error', () => { clearTimeout(timer); answer(res, 502, 'error'); });
  });
  call.on('socket', () => { socketAt = Date.now() - start; });
  const timer = setTimeout(() => {
    answer(res, 504, socketAt >= 0 && socketAt < timeout / 10 ? 'dependency' : 'late-socket');
    call.destroy();
  }, timeout);
  call.on('error', (err) => {
    clearTimeout(timer);
    const reason = err.code === 'ECONNRESET' ? 'reset' : err.code === 'ECONNREFUSED' ? 'refused' : 'error';
    answer(res, 502, reason);
  });
});
server.keepAliveTimeout = 60000;
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
