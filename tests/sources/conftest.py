from tests.sync.conftest import remote

__all__ = ["remote"]
