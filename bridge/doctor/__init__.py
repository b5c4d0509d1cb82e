"""Self-diagnosis of an installed bridge: ``atmosphere-bridge doctor``.

Each check returns a ``CheckResult`` (ok/warn/fail, what it found, how to fix it).
Host checks read ``/proc``, ``/sys`` and ``/etc`` through a root path so tests can point
them at prepared trees; network checks talk to the Matter controller's WebSocket API and
the Thread border router's REST API.
"""
