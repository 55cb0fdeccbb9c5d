"""The REST routers, one module per domain, which :func:`briefd.service.app.create_app` mounts:
thin handlers over :class:`briefd.service.state.ServiceState` and :class:`briefd.api.Briefd`.
No router imports another; what they share lives in :mod:`briefd.service.deps`."""
