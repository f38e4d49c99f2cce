"""The real model client, in parts: request/reply types (``chat``), typed errors (``errors``),
shared connection pools (``pools``) and the client itself (``model_client``).

It speaks Chat Completions through whatever httpx transport it is given and imports nothing
from the simulator; ``foldscope.engine.connect`` chooses the transport for a model config.
"""
