from tests.proposals.test_github import forge_api, github
from tests.sync.conftest import git_api, remote

__all__ = ["forge_api", "git_api", "github", "remote"]
