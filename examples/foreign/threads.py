"""threads.py: a Python service (standard library only) that calls its dependencies from thread
pools with unbounded queues.

Each request to /a calls dependency A, each to /b calls B; the handler thread (one per request,
ThreadingHTTPServer) hands the call to a concurrent.futures.ThreadPoolExecutor and waits at most
--timeout for its result. --layout shared gives both dependencies one executor of --workers
threads; split gives each its own executor of half of them. An executor queues every call it has
no idle thread for, without bound, and a call whose caller gave up still runs when its turn comes
(nothing cancels it), as such services do.

Every response says what happened, in the service's own words (X-Reason):
  200                  the dependency answered
  504 queued           the --timeout ran out while the call still waited in the executor's queue
  504 dependency       the --timeout ran out while a worker was calling the dependency
  502 reset|refused|error|status-NNN  the dependency's call failed
/metrics (Prometheus text), per executor:
  python_executor_workers_busy{pool}, python_executor_workers_max{pool}, python_executor_queue_depth{pool}
"""
import argparse
import concurrent.futures
import http.client
import http.server
import signal
import sys
import threading

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--a", required=True)
p.add_argument("--b", required=True)
p.add_argument("--layout", choices=["shared", "split"], default="shared")
p.add_argument("--workers", type=int, default=10)
p.add_argument("--timeout", type=float, default=500, help="milliseconds")
args = p.parse_args()
TIMEOUT = args.timeout / 1000
DEPS = {"A": args.a, "B": args.b}


class Pool:
    """An executor with the counts /metrics reports."""

    def __init__(self, name, workers):
        self.name, self.max = name, workers
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self.lock = threading.Lock()
        self.busy = 0

    def submit(self, fn, started):
        def run():
            with self.lock:
                self.busy += 1
            started.set()
            try:
                return fn()
            finally:
                with self.lock:
                    self.busy -= 1

        return self.executor.submit(run)

    def queued(self):
        return self.executor._work_queue.qsize()  # the executor's own unbounded queue


if args.layout == "shared":
    shared = Pool("shared", args.workers)
    POOLS = {"A": shared, "B": shared}
else:
    POOLS = {"A": Pool("A", args.workers // 2), "B": Pool("B", args.workers // 2)}

local = threading.local()


def call(dep):
    """One GET of the dependency on this worker's own keep-alive connection."""
    conns = getattr(local, "conns", None)
    if conns is None:
        conns = local.conns = {}
    c = conns.get(dep)
    if c is None:
        c = conns[dep] = http.client.HTTPConnection(DEPS[dep], timeout=10)
    try:
        c.request("GET", "/")
        r = c.getresponse()
        body = r.read()
        return r.status, body
    except Exception:
        conns.pop(dep, None)
        c.close()
        raise


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, reason="", body=b"ok"):
        self.send_response(status)
        if reason:
            self.send_header("X-Reason", reason)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/healthz":
            return self.answer(200)
        if self.path == "/metrics":
            lines = []
            for pool in {id(p): p for p in POOLS.values()}.values():
                lines += [f'python_executor_workers_busy{{pool="{pool.name}"}} {pool.busy}',
                          f'python_executor_workers_max{{pool="{pool.name}"}} {pool.max}',
                          f'python_executor_queue_depth{{pool="{pool.name}"}} {pool.queued()}']
            return self.answer(200, body=("\n".join(lines) + "\n").encode())
        dep = "A" if self.path.startswith("/a") else "B" if self.path.startswith("/b") else ""
        if not dep:
            return self.answer(404, body=b"not found")
        started = threading.Event()
        fut = POOLS[dep].submit(lambda: call(dep), started)
        try:
            status, body = fut.result(timeout=TIMEOUT)
        except concurrent.futures.TimeoutError:
            return self.answer(504, "dependency" if started.is_set() else "queued")
        except ConnectionResetError:
            return self.answer(502, "reset")
        except ConnectionRefusedError:
            return self.answer(502, "refused")
        except Exception:
            return self.answer(502, "error")
        if status >= 500:
            return self.answer(502, f"status-{status}")
        self.answer(200, body=body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
server.serve_forever()
