"""A stand-in vLLM server: `python -m ingest.standin_vllm --port 8001 [--version v1|v0]
[--spec-tokens 3] [--lora-adapters sql-lora,chat-lora] [--kv-connector]`.

Serves `/metrics` with vLLM's real metric names from a continuous-batching simulation
(ingest/standin/simulation.py) advanced to the wall clock on every request, so the
Serving pages move live in the demo. `POST /restart` (or `--restart-every`) restarts the
simulated server: counters start again from zero with new `_created` times. Speculative
decoding, LoRA and a KV connector (NIXL, with a cross-instance prefix cache) are off unless
their flag is given, and their families are then absent, as on a real server.
"""

from __future__ import annotations

import argparse
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from ingest.standin.exposition import V0, V1, Exposition
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
        self.exposition = Exposition(self.engines, self.version, self.model, now)

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
            return self.exposition.render()


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


def from_args(argv: list[str] | None = None) -> tuple[StandinServer, argparse.Namespace]:
    """The server the command line asks for (argparse exits with one line on a bad flag)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--version", choices=(V1, V0), default=V1, help="engine generation")
    parser.add_argument("--engines", type=int, default=1, help="data-parallel engines (V1)")
    parser.add_argument("--model", default="meta-llama/Llama-3.1-8B-Instruct")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=4096, help="KV blocks per engine")
    parser.add_argument("--restart-every", type=float, help="seconds between restarts")
    parser.add_argument(
        "--spec-tokens", type=int, default=0, help="speculative tokens per draft (0: off)"
    )
    parser.add_argument(
        "--spec-acceptance", type=float, default=0.75, help="a draft token's acceptance chance"
    )
    parser.add_argument("--lora-adapters", default="", help="comma-separated LoRA adapter names")
    parser.add_argument("--max-loras", type=int, default=4)
    parser.add_argument(
        "--kv-connector", action="store_true", help="a NIXL KV connector with an external cache"
    )
    args = parser.parse_args(argv)
    adapters = tuple(a.strip() for a in args.lora_adapters.split(",") if a.strip())
    if args.spec_tokens < 0 or not 0.0 < args.spec_acceptance < 1.0:
        parser.error("--spec-tokens must be 0 or more and --spec-acceptance between 0 and 1")
    if args.version == V0 and (args.spec_tokens or adapters or args.kv_connector):
        parser.error("--spec-tokens, --lora-adapters and --kv-connector need --version v1")
    standin = StandinServer(
        version=args.version,
        engines=args.engines if args.version == V1 else 1,
        model=args.model,
        seed=args.seed,
        config=EngineConfig(
            num_gpu_blocks=args.blocks,
            spec_tokens=args.spec_tokens,
            spec_acceptance=args.spec_acceptance,
            lora_adapters=adapters,
            max_loras=args.max_loras,
            kv_connector=args.kv_connector,
        ),
        restart_every_s=args.restart_every,
    )
    return standin, args


def main(argv: list[str] | None = None) -> None:
    standin, args = from_args(argv)
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
