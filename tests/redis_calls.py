"""Counting what a request sends to Redis: round trips and bytes, over the real connection."""

from contextlib import contextmanager

from redis.connection import Connection


@contextmanager
def redis_sent(monkeypatch):
    """Yields a list that receives one entry per round trip (a pipeline is one): its bytes."""
    sent: list[int] = []
    send = Connection.send_packed_command

    def counting(connection, command, *args, **kwargs):
        chunks = [command] if isinstance(command, bytes | str) else command
        sent.append(sum(len(chunk) for chunk in chunks))
        return send(connection, command, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Connection, "send_packed_command", counting)
        yield sent
