"""The rooms HTTP face: the FastAPI app with the agent, user and admin routes (`app`), their request
bodies (`bodies`) and the guard that bounds every request body (`guard`). Rules stay in
`rooms.domain`; the protocol details the routes speak are in `rooms.protocol`.
"""
