"""A small real SMTP server on a loopback port, in a thread, for tests of e-mail that leaves signoff
(aiosmtpd is not a dependency): it speaks enough of RFC 5321 for Python's smtplib (EHLO/HELO, MAIL,
RCPT, DATA, RSET, NOOP, QUIT) and keeps each message it accepts, parsed."""

from __future__ import annotations

import socketserver
import threading
from email import message_from_bytes, policy
from email.message import EmailMessage
from types import TracebackType


class _Session(socketserver.StreamRequestHandler):
    server: _Server

    def _say(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        self._say("220 localhost test SMTP")
        sender, recipients = "", []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line.decode(errors="replace").strip().split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                self._say("250 localhost")
            elif verb == "MAIL":
                sender, recipients = line.decode().split(":", 1)[1].strip(), []
                self._say("250 OK")
            elif verb == "RCPT":
                recipients.append(line.decode().split(":", 1)[1].strip().strip("<>"))
                self._say("250 OK")
            elif verb == "DATA":
                self._say("354 end with <CRLF>.<CRLF>")
                body = b""
                while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                    body += chunk[1:] if chunk.startswith(b"..") else chunk
                message = message_from_bytes(body, policy=policy.default)
                assert isinstance(message, EmailMessage)
                self.server.received(sender, recipients, message)
                self._say("250 OK")
            elif verb in ("RSET", "NOOP"):
                self._say("250 OK")
            elif verb == "QUIT":
                self._say("221 bye")
                return
            else:
                self._say("502 not implemented")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Session)
        self.messages: list[tuple[str, list[str], EmailMessage]] = []
        self.arrived = threading.Condition()

    def received(self, sender: str, recipients: list[str], message: EmailMessage) -> None:
        with self.arrived:
            self.messages.append((sender, recipients, message))
            self.arrived.notify_all()


class SmtpServer:
    """`with SmtpServer() as smtp:` listens on `smtp.port`; `smtp.messages` are the accepted ones."""

    def __init__(self) -> None:
        self._server = _Server()
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def messages(self) -> list[tuple[str, list[str], EmailMessage]]:
        with self._server.arrived:
            return list(self._server.messages)

    def __enter__(self) -> SmtpServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
