"""Development tools that write into a source tree (``python -m scalefront.dev.schema --write``); nothing here runs
when scalefront is used."""
