"""DeleteTopics v1-6 (v0 was removed in Kafka 4.0, KIP-896): v1-5 name topics; v5 error
messages; v6 names or ids (an unknown id is UNKNOWN_TOPIC_ID). Deleting a topic drops its log at
once and every group's committed offsets for it (Kafka's coordinator does the latter on the
metadata update that deletes the topic).

The request is checked as Kafka 4.x's ControllerApis.deleteTopics checks it, before anything is
deleted: a name or id given more than once is deleted not at all and answered once with
INVALID_REQUEST ("Duplicate topic name." / "Duplicate topic id."); an entry with neither or both
of name and id is INVALID_REQUEST; a name that resolves to an id also given by id is
INVALID_REQUEST and neither is deleted. Kafka shuffles the results (so their position says
nothing about which topics exist); kafka-emu answers in a fixed order: the refused entries, then
the rest in request order.
"""

from __future__ import annotations

import uuid

from ...errors import ErrorCode
from ...protocol.messages.delete_topics import API, DeletableTopicResult, DeleteTopicsResponse
from . import Handler

ZERO_UUID = uuid.UUID(int=0)


def names_by_state(version: int) -> bool:
    return version >= 6


def has_error_message(version: int) -> bool:
    return version >= 5


class _Once(dict):
    """Keys given exactly once, in order; a key given again moves to ``repeated`` for good."""

    def __init__(self) -> None:
        super().__init__()
        self.repeated: dict = {}

    def give(self, key) -> None:
        if key in self.repeated or key in self:
            self.repeated[key] = None
            self.pop(key, None)
        else:
            self[key] = None


async def delete_topics(ctx, request) -> DeleteTopicsResponse:
    v = ctx.version
    topics = ctx.broker.topics
    results: list[DeletableTopicResult] = []

    def answer(name, topic_id, code, message=None) -> None:
        results.append(DeletableTopicResult(
            name=name, topic_id=topic_id, error_code=code,
            error_message=message if has_error_message(v) else None))

    names, ids = _Once(), _Once()
    if names_by_state(v):
        for t in request.topics:
            if t.name is None and t.topic_id == ZERO_UUID:
                answer(None, ZERO_UUID, ErrorCode.INVALID_REQUEST,
                       "Neither topic name nor id were specified.")
            elif t.name is None:
                ids.give(t.topic_id)
            elif t.topic_id == ZERO_UUID:
                names.give(t.name)
            else:
                answer(t.name, t.topic_id, ErrorCode.INVALID_REQUEST,
                       "You may not specify both topic name and topic id.")
    else:
        for name in request.topic_names:
            names.give(name)
    for name in names.repeated:
        answer(name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    for topic_id in ids.repeated:
        answer(None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")

    chosen: dict[uuid.UUID, str] = {}  # id -> name of every topic to delete
    for topic_id in ids:
        info = topics.lookup_id(topic_id)
        if info is None:
            answer(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID,
                   "This server does not host this topic ID.")
        else:
            chosen[topic_id] = info.name
    for name in names:
        info = topics.lookup(name)
        if info is None:
            answer(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                   "This server does not host this topic-partition.")
        elif info.topic_id in ids.repeated or info.topic_id in chosen:
            ids.repeated[info.topic_id] = None
            chosen.pop(info.topic_id, None)
            answer(name, info.topic_id, ErrorCode.INVALID_REQUEST,
                   "The provided topic name maps to an ID that was already supplied.")
        else:
            chosen[info.topic_id] = name
    for topic_id, name in chosen.items():
        ctx.broker.delete_topic(name)
        answer(name, topic_id, ErrorCode.NONE)
    return DeleteTopicsResponse(responses=results)


HANDLER = Handler(API, "1-6", delete_topics)
