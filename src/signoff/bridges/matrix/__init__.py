"""`signoff bridge matrix`: signoff rooms in a Matrix room (bot or application-service mode), on mautrix."""

from signoff.bridges.matrix.bridge import MESSAGE_ID_KEY, MatrixBridge
from signoff.bridges.matrix.inbound import classify
from signoff.bridges.matrix.state import BridgeState, BridgeStore

__all__ = ["MESSAGE_ID_KEY", "BridgeState", "BridgeStore", "MatrixBridge", "classify"]
