"""Counting what is sent to Redis (round trips and their bytes) over the real connection.

Shared by the tests and by `make bench`, which reports cache round trips per request.
"""

from contextlib import contextmanager

from redis.connection import Connection


@contextmanager
def redis_sent():
    """Yields a list that receives, per round trip (a pipeline is one), the bytes sent."""
    sent: list[int] = []
    send = Connection.send_packed_command

    def counting(connection, command, *args, **kwargs):
        chunks = [command] if isinstance(command, bytes | str) else command
        sent.append(sum(len(chunk) for chunk in chunks))
        return send(connection, command, *args, **kwargs)

    Connection.send_packed_command = counting
    try:
        yield sent
    finally:
        Connection.send_packed_command = send
