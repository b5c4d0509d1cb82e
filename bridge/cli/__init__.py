"""The command line: ``atmosphere-bridge`` and one module per command group."""
