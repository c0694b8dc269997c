"""The one GitHub REST client: App or token authentication, pagination, rate limits, ETags, pushes."""

from signoff.github.auth import AppAuth, Auth, TokenAuth
from signoff.github.client import API_URL, GitHubClient
from signoff.github.config import git_url, github_client
from signoff.github.push import fetch_commits, push_branch
from signoff.github.repo import Repo, parse_pull

__all__ = ["API_URL", "AppAuth", "Auth", "GitHubClient", "Repo", "TokenAuth", "fetch_commits", "git_url",
           "github_client", "parse_pull", "push_branch"]
