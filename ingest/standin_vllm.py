"""A stand-in vLLM server: `python -m ingest.standin_vllm --port 8001 [--version v1|v0]`.

Serves `/metrics` with vLLM's real metric names from a continuous-batching simulation
(ingest/standin/simulation.py) advanced to the wall clock on every request, so the
Serving pages move live in the demo. `POST /restart` (or `--restart-every`) restarts the
simulated server: counters start again from zero with new `_created` times.
"""

from __future__ import annotations

import argparse
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from ingest.standin.exposition import V0, V1, render
from ingest.standin.simulation import Engine, EngineConfig


class StandinServer:
    def __init__(
        self,
        version: str = V1,
        engines: int = 1,
        model: str = "meta-llama/Llama-3.1-8B-Instruct",
        seed: int = 7,
        config: EngineConfig | None = None,
        restart_every_s: float | None = None,
    ) -> None:
        self.version = version
        self.engine_count = engines
        self.model = model
        self.seed = seed
        self.config = config or EngineConfig()
        self.restart_every_s = restart_every_s
        self.lock = threading.Lock()
        self.restarts = 0
        self._boot(time.time())

    def _boot(self, now: float) -> None:
        self.created = now
        self.engines = {
            str(i): Engine(self.config, self.seed * 1000 + self.restarts * 10 + i, now)
            for i in range(self.engine_count)
        }

    def restart(self, now: float | None = None) -> None:
        with self.lock:
            self.restarts += 1
            self._boot(now if now is not None else time.time())

    def metrics(self, now: float | None = None) -> str:
        now = now if now is not None else time.time()
        with self.lock:
            if self.restart_every_s and now - self.created >= self.restart_every_s:
                self.restarts += 1
                self._boot(now)
            for engine in self.engines.values():
                engine.advance_to(now)
            return render(self.engines, self.version, self.model, self.created)


def serve(standin: StandinServer, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.split("?")[0] == "/metrics":
                body = standin.metrics().encode()
                self._send(200, body, CONTENT_TYPE_PLAIN_0_0_4)  # what generate_latest writes
            elif self.path == "/health":
                self._send(200, b"")
            else:
                self._send(404, b"not found")

        def do_POST(self) -> None:
            if self.path == "/restart":
                standin.restart()
                self._send(200, b"restarted\n")
            else:
                self._send(404, b"not found")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--version", choices=(V1, V0), default=V1, help="engine generation")
    parser.add_argument("--engines", type=int, default=1, help="data-parallel engines (V1)")
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=4096, help="KV blocks per engine")
    parser.add_argument("--restart-every", type=float, help="seconds between restarts")
    args = parser.parse_args(argv)
    standin = StandinServer(
        version=args.version,
        engines=args.engines if args.version == V1 else 1,
        model=args.model,
        seed=args.seed,
        config=EngineConfig(num_gpu_blocks=args.blocks),
        restart_every_s=args.restart_every,
    )
    server = serve(standin, args.host, args.port)
    print(f"stand-in vLLM ({args.version}) on http://{args.host}:{args.port}/metrics", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
