"""What a user gives, read and checked: the catalogs (``catalog``), scenario files (``scenario``), one
configuration's arguments (``model``: `evaluate`, ``network``: `bom`), each turned into the specs the Rust core
takes. Every problem is one line naming the file, the entry and the field (``messages``, ``files``).

The flow: files and arguments -> ``inputs`` -> a request -> ``scalefront.engine`` (the core underneath) -> frames
-> ``scalefront.roi`` / ``scalefront.fidelity`` -> ``scalefront.cli`` or a front end through ``scalefront.api``.
"""
