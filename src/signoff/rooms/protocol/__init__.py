"""The Switch agent protocol (revision 1), apart from any transport: contract negotiation and SSE
frames (`wire`), the agent event stream (`streams`) and the agent operations with their argument
schemas (`operations`). The HTTP routes (`rooms.http`) and the in-process client transport
(`rooms.client`) both speak it through these modules, so they behave the same.

The client (`signoff.rooms.client`) stays its own package beside this one: it is what workflows
import to reach rooms, over HTTP or in process, and it uses the protocol rather than defining it.
"""
