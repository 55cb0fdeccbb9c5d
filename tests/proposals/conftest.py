from tests.sync.conftest import git_api, remote

__all__ = ["git_api", "remote"]
