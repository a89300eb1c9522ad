"""kombu's filesystem transport, with messages that appear in the queue folder whole.

kombu writes a message file in place, under its final name. A worker listing the folder can
move it away before the bytes are written and then fail on an empty message, which stops the
worker. Here the file is written under a name the reader skips, then renamed into place
(atomic on one filesystem). `filesystem://` means this transport in this project: the
alias is registered when the Celery app is imported.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]  # kombu calls it so
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as message:
                message.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def register() -> None:
    TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
