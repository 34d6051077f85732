"""Share sessions (KIP-932), as Kafka 4.2's ShareSessionCache and SharePartitionManager.newContext
keep them.

Theory of operation. A share consumer keeps one share session per broker, keyed by (group id,
member id). The ShareSessionEpoch of each request says what it is:

- 0 (INITIAL) opens a session, replacing any session of the same key; the request's partitions
  are the session's partitions (a *full* fetch). Acknowledgements are not allowed with epoch 0
  (INVALID_REQUEST): there is nothing acquired in a session that does not exist yet. A full cache
  (``group.share.max.share.sessions``) refuses with SHARE_SESSION_LIMIT_REACHED.
- N > 0 continues the session (an *incremental* fetch): the request's partitions are added,
  ForgottenTopicsData removed. N must be the session's next epoch (INVALID_SHARE_SESSION_EPOCH);
  a missing session is SHARE_SESSION_NOT_FOUND. Each request moves the epoch on (wrapping from
  2^31-1 to 1).
- -1 (FINAL) closes the session after its acknowledgements; it fetches nothing. The broker then
  releases what the member still holds.

ShareAcknowledge travels in the same session: epoch 0 is INVALID_SHARE_SESSION_EPOCH, -1 closes
it, any other epoch must match and moves it on. A session also dies with its connection (Kafka
4.1+ releases a disconnected member's records at once instead of waiting for the locks).

Pure: no clock, no trio. Errors are raised as ``SessionError`` with the Kafka code.
"""

from __future__ import annotations

import attrs

from ...errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_EPOCH = 2**31 - 1

TopicPartition = tuple  # (topic_id: uuid.UUID, partition: int)


class SessionError(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@attrs.define(eq=False)
class ShareSession:
    group_id: str
    member_id: str
    connection_id: int
    epoch: int = 1  # the epoch the next request must carry
    partitions: dict = attrs.field(factory=dict)  # (topic_id, partition) -> None, in order


@attrs.frozen(kw_only=True)
class SessionContext:
    """What a request is within its session: ``full`` (epoch 0: answer every session partition)
    or incremental; ``final`` (epoch -1: acknowledge, fetch nothing, close)."""
    session: ShareSession | None
    full: bool
    final: bool


class ShareSessionCache:
    def __init__(self, max_sessions: int = 2000) -> None:
        self.max_sessions = max_sessions  # group.share.max.share.sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def fetch_context(self, group_id: str, member_id: str, epoch: int, *, connection_id: int,
                      wanted: list[TopicPartition], forgotten: list[TopicPartition],
                      has_acks: bool) -> SessionContext:
        """The session a ShareFetch runs in (opened, moved on or about to close)."""
        key = (group_id, member_id)
        if epoch == FINAL_EPOCH:
            session = self.sessions.get(key)
            if session is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND,
                                   f"Share session not found for member {member_id}")
            return SessionContext(session=session, full=True, final=True)
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise SessionError(ErrorCode.INVALID_REQUEST,
                                   "Acknowledge data present on initial epoch")
            replaced = self.sessions.pop(key, None)
            if len(self.sessions) >= self.max_sessions:
                if replaced is not None:
                    self.sessions[key] = replaced
                raise SessionError(ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                                   "The share session cache is full")
            session = ShareSession(group_id, member_id, connection_id,
                                   partitions=dict.fromkeys(wanted))
            self.sessions[key] = session
            return SessionContext(session=session, full=True, final=False)
        if epoch < 0:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, f"bad epoch {epoch}")
        session = self._continue(key, member_id, epoch)
        for tp in wanted:
            session.partitions.setdefault(tp)
        for tp in forgotten:
            session.partitions.pop(tp, None)
        session.connection_id = connection_id
        return SessionContext(session=session, full=False, final=False)

    def acknowledge_context(self, group_id: str, member_id: str, epoch: int) -> SessionContext:
        """The session a ShareAcknowledge runs in."""
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                               "Share session epoch 0 is not allowed for acknowledgements")
        if epoch == FINAL_EPOCH:
            session = self.sessions.get(key)
            if session is None:
                raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND,
                                   f"Share session not found for member {member_id}")
            return SessionContext(session=session, full=False, final=True)
        if epoch < 0:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, f"bad epoch {epoch}")
        return SessionContext(session=self._continue(key, member_id, epoch), full=False,
                              final=False)

    def _continue(self, key, member_id: str, epoch: int) -> ShareSession:
        session = self.sessions.get(key)
        if session is None:
            raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND,
                               f"Share session not found for member {member_id}")
        if session.epoch != epoch:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                               f"Expected share session epoch {session.epoch}, got {epoch}")
        session.epoch = next_epoch(epoch)
        return session

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def closed_connection(self, connection_id: int) -> list[ShareSession]:
        """Drop (and return) the sessions last used on ``connection_id``."""
        gone = [s for s in self.sessions.values() if s.connection_id == connection_id]
        for s in gone:
            del self.sessions[(s.group_id, s.member_id)]
        return gone

    def drop_group(self, group_id: str) -> None:
        for key in [k for k in self.sessions if k[0] == group_id]:
            del self.sessions[key]
