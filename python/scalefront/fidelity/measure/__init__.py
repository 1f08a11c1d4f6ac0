"""`scalefront measure`: the kernel microbenchmarks of a buyer's proof-of-concept GPU node, fitted to a GPU catalog
entry whose figures cite the run.

Two halves. The device half runs on the GPU node and needs only the standard library, PyTorch and Triton:
``cases`` (what to measure: the GEMMs, attention, HBM and expert shapes a model needs, a `Plan`), ``driver`` (runs a
plan on a `Device`, with progress, into a record in the JSON layout of ``gpu_bench.py``), ``torch_device`` (the
PyTorch device), and ``bench`` (the same as a script for a bare GPU box: ``python3 .../measure/bench.py --quick``).
These import one another relatively and nothing else of scalefront, so that the script runs where the extension is
not built; keep it so. The catalog half needs scalefront: ``plan`` (a scenario's or model's plan from the
catalogs), ``replay`` and ``rows`` (a recorded run read back and checked: this tool's, ``gpu_bench.py``'s or
``moe_bench.py``'s JSON), ``session`` (a live run: the device, the catalog GPU it is, the date), ``fit`` (the
catalog figures and measured curves of a run) and ``entry`` (the printed summary and the catalog file).
"""
