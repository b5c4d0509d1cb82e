"""Demo and test scaffolding: virtual matter.js devices for `make demo` and the tests.

Not part of the production Matter source; only the CLI's demo and the tests use it.
"""
