"""The web face: server-rendered pages beside the APIs, in the one app `signoff serve` runs.

Pages are thin: they authenticate a person (a session cookie from a password or a one-time link),
call the workflow's public facade (RoomService, Desk) and render a Jinja2 template. Forms work
without JavaScript; the few small scripts of our own (live room updates over SSE) are served from
/static under a Content-Security-Policy that allows no inline script.
"""
