"""Simulated models: summarisers with a temperament, served behind the real client over HTTP.

A simulated model sees only the request body it is sent (messages, response_format, parameters);
nothing here reads an arm id, a scenario file or a database. Import submodules directly
(``sim.transport``, ``sim.server``, ``sim.endpoint``); this package module stays import-free so
that ``foldscope.engine.models`` can import the fault schema without cycles.
"""
