"""Live Confluence and Jira lookups (A1, A2) and the issue that heads a bundle (B1): built
from settings, read-only, nothing indexed or stored. ``Atlassian`` is the facade the API hands
out; ``Account`` is whom a request is served as."""

from briefd.atlassian.credentials import Account, caller_account
from briefd.atlassian.query import JiraQuery
from briefd.atlassian.service import Atlassian, IssueLookup

__all__ = ["Account", "Atlassian", "IssueLookup", "JiraQuery", "caller_account"]
