"""A stand-in vLLM server for demos and tests: a continuous-batching simulation exposing
vLLM's real metric names (V1 or V0). Run it with `python -m ingest.standin_vllm`."""
