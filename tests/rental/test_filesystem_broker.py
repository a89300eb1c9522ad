"""The server-less broker of `make run`: a message file appears in the queue folder whole.

kombu's own filesystem transport creates the file under its final name and then writes it;
a worker that lists the folder in between reads an empty message and stops. Ours writes
under a name the reader skips and renames the finished file into place.
"""

import os

from kombu import Connection

from rental import kombu_filesystem


def _connection(folder):
    # The plain URL of `make run`'s default broker: it names this project's transport.
    return Connection(
        "filesystem://",
        transport_options={
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "control_folder": str(folder / "control"),
        },
    )


def test_a_message_shows_under_its_final_name_only_once_written(tmp_path, monkeypatch):
    seen_before_rename = []
    real_replace = os.replace

    def replace(source, target):
        # What a worker listing the folder right now would find.
        seen_before_rename.extend(path.name for path in tmp_path.glob("*.msg"))
        assert os.path.getsize(source) > 0
        real_replace(source, target)

    monkeypatch.setattr(kombu_filesystem.os, "replace", replace)
    with _connection(tmp_path) as conn:
        assert isinstance(conn.transport, kombu_filesystem.Transport)
        queue = conn.SimpleQueue("jobs")
        queue.put({"n": 1, "padding": "x" * 100_000})
        message = queue.get(timeout=1)
        assert message.payload["n"] == 1
        message.ack()
    assert seen_before_rename == []
    assert not list(tmp_path.glob(".*.partial"))
