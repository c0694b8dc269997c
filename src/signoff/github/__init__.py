"""The one GitHub REST client: App or token authentication, pagination, rate limits, ETags, pushes."""

from signoff.github.auth import AppAuth, Auth, TokenAuth
from signoff.github.client import API_URL, GitHubClient
from signoff.github.push import push_branch
from signoff.github.repo import Repo, parse_pull

__all__ = ["API_URL", "AppAuth", "Auth", "GitHubClient", "Repo", "TokenAuth", "parse_pull", "push_branch"]
