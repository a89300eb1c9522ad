import io

from django.conf import settings
from rest_framework.parsers import JSONParser

from api.errors import PayloadTooLarge


class BoundedJSONParser(JSONParser):
    """JSON bodies up to API_MAX_BODY_BYTES; anything bigger is a 413 before parsing.

    The limit holds whether or not the client sent a Content-Length.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        return super().parse(io.BytesIO(raw), media_type, parser_context)
