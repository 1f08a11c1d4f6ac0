"""The engine driver: requests in, frames and files out. The Rust core sweeps (``sweep``: a scenario's space in a
worker thread, polled for progress, its kept rows labelled as polars frames and Pareto frontiers); ``shards``
splits a sweep by cells for job arrays and merges the parts exactly; ``cluster`` maps shards over a Dask cluster;
``limits`` stops a sweep projected over its time or disk; ``export`` writes frames atomically; ``progress`` draws
the progress line; ``job`` runs a whole sweep or merge request as the command line asks for it.
"""
