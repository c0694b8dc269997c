"""Notifications when something new waits for a person ("Waiting for me", `signoff.web.inbox`),
outside the browser: a webhook and e-mail, where `[notify]` configures them.

    [notify]
    webhook = "https://hooks.example/signoff"   # POSTs JSON: the person and their new items
    smtp_host = "127.0.0.1"                      # e-mail through this SMTP server (port 25 unless smtp_port)
    smtp_from = "signoff@example.com"
    emails = { alice = "alice@example.com" }     # room user name -> address; nobody else is e-mailed
    url = "https://signoff.example"              # the pages' address, for the links in a notification
    every_seconds = 30                           # how often the server looks

A thread of the serving process (`start`, from the pages' first request) reads each person's
"Waiting for me" the way the start page does, every `every_seconds`, and sends each new item once:
what was already sent is kept under `<home>/web/notified.json`, so a restart resends nothing. The
first look after a start only records what waits (nobody is told of old news). A look holds
`<home>/web/notified.lock` from reading that file to writing it back, so two servers on one home
take turns, and an item one of them sent is old news to the other. The browser's own
notification is `static/notify.js`, opted into on the start page.

What leaves the server is what the person's own start page shows: the kind, the title, the link and
the time of each item; never a diff, a report's text or an incident's detail.
"""

from __future__ import annotations

import json
import smtplib
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any
from urllib.parse import urlsplit

import httpx
from fastapi import FastAPI
from starlette.requests import Request

from signoff.kernel.errors import SignoffError, UsageError
from signoff.kernel.filelock import exclusive
from signoff.kernel.replace import replace_text
from signoff.kernel.settings import Settings
from signoff.rooms import Principal

KNOWN = {"webhook", "smtp_host", "smtp_port", "smtp_from", "emails", "url", "every_seconds"}


@dataclass(frozen=True)
class NotifyConfig:
    webhook: str = ""
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_from: str = ""
    emails: dict[str, str] = field(default_factory=dict)
    url: str = ""
    every_seconds: float = 30.0

    @property
    def configured(self) -> bool:
        return bool(self.webhook or (self.smtp_host and self.emails))

    @classmethod
    def load(cls, settings: Settings | None) -> NotifyConfig:
        section = settings.section("notify") if settings is not None else {}
        unknown = sorted(set(section) - KNOWN)
        if unknown:
            raise UsageError(f"unknown [notify] setting(s): {', '.join(unknown)}",
                             f"use only: {', '.join(sorted(KNOWN))}")
        cfg = cls(**section)
        for name, value in (("webhook", cfg.webhook), ("url", cfg.url)):
            if value and (urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).netloc):
                raise UsageError(f"[notify] {name} must be an http(s) address", 'e.g. "https://hooks.example/signoff"')
        if not isinstance(cfg.emails, dict) or not all(isinstance(k, str) and isinstance(v, str) and "@" in v
                                                       for k, v in cfg.emails.items()):
            raise UsageError("[notify] emails maps room user names to e-mail addresses",
                             'write it as emails = { alice = "alice@example.com" }')
        if cfg.emails and not (cfg.smtp_host and cfg.smtp_from):
            raise UsageError("[notify] emails needs smtp_host and smtp_from", "name the SMTP server and the sender")
        if not isinstance(cfg.smtp_port, int) or not 1 <= cfg.smtp_port <= 65535:
            raise UsageError("[notify] smtp_port must be a port number", "the default is 25")
        if not isinstance(cfg.every_seconds, int | float) or not 1 <= cfg.every_seconds <= 3600:
            raise UsageError("[notify] every_seconds must be 1 to 3600", "the default is 30")
        return cfg


@dataclass(frozen=True)
class Sent:
    user: str
    channel: str  # webhook | email
    items: int


class Notifier:
    """Looks at each person's "Waiting for me" and sends what is new (`check_once`)."""

    def __init__(self, app: FastAPI, settings: Settings, config: NotifyConfig) -> None:
        self.app, self.config = app, config
        self.path = settings.home / "web" / "notified.json"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        if getattr(app.state, "notifier", None) is None:
            # One notifier an app: the pages' first request (`start`) then starts no second one.
            app.state.notifier = self

    def _seen(self) -> dict[str, list[str]] | None:
        try:
            found: dict[str, list[str]] = json.loads(self.path.read_text(encoding="utf-8"))
            return found
        except (OSError, ValueError):
            return None

    def _keep(self, seen: dict[str, list[str]]) -> None:
        replace_text(self.path, json.dumps(seen))

    def _waiting(self, user: Principal) -> list[Any]:
        from signoff.web.inbox import waiting_for

        # The start page's own reading, on a request of this app that no client sent.
        request = Request({"type": "http", "app": self.app, "method": "GET", "path": "/", "headers": [],
                           "query_string": b""})
        return waiting_for(request, user)

    def check_once(self) -> list[Sent]:
        """Send each person's items that were not sent before; the first look only records them."""
        with self.lock, exclusive(self.path.with_suffix(".lock")):
            before = self._seen()
            seen: dict[str, list[str]] = {} if before is None else dict(before)
            sent: list[Sent] = []
            for user in self.app.state.rooms.users():
                try:
                    items = self._waiting(user)
                except SignoffError:
                    continue  # a workflow that cannot be read now: the next look tries again
                keys = [w.identity for w in items]
                old = set(seen.get(user.name, []))
                new = [w for w, k in zip(items, keys, strict=True) if k not in old]
                seen[user.name] = keys
                if before is None or not new:
                    continue
                told = self._send(user, new)
                if not told:  # every channel failed: the next look sends these again
                    seen[user.name] = [k for k in keys if k in old]
                sent += told
            self._keep(seen)
            return sent

    def _send(self, user: Principal, items: list[Any]) -> list[Sent]:
        listed = [{"kind": w.kind, "title": w.title, "link": self.config.url.rstrip("/") + w.href, "at": w.at}
                  for w in items]
        out = []
        if self.config.webhook:
            try:
                httpx.post(self.config.webhook, json={"user": user.name, "waiting": listed}, timeout=10.0,
                           follow_redirects=False).raise_for_status()
                out.append(Sent(user.name, "webhook", len(items)))
            except httpx.HTTPError:
                pass  # tried again at the next look unless another channel told the person
        address = self.config.emails.get(user.name)
        if address and self.config.smtp_host:
            message = EmailMessage()
            message["From"], message["To"] = self.config.smtp_from, address
            message["Subject"] = f"signoff: {len(items)} new thing{'s' if len(items) != 1 else ''} waiting for you"
            message.set_content("\n".join(f"- {i['kind']}: {i['title']}\n  {i['link']}" for i in listed) + "\n")
            try:
                with smtplib.SMTP(self.config.smtp_host, self.config.smtp_port, timeout=10.0) as smtp:
                    smtp.send_message(message)
                out.append(Sent(user.name, "email", len(items)))
            except (OSError, smtplib.SMTPException):
                pass
        return out

    def run(self) -> None:
        while not self.stop.wait(self.config.every_seconds if self._seen() is not None else 0):
            try:
                self.check_once()
            except SignoffError:
                continue


def start(app: FastAPI, settings: Settings | None) -> Notifier | None:
    """The app's notifier, started once (a daemon thread) when `[notify]` configures a channel."""
    if settings is None:
        return None
    config = NotifyConfig.load(settings)
    if not config.configured:
        return None
    found: Notifier | None = getattr(app.state, "notifier", None)
    if found is None:
        found = Notifier(app, settings, config)
        threading.Thread(target=found.run, name="signoff-notify", daemon=True).start()
    return found

