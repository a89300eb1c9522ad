import io

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from api.errors import PayloadTooLarge

# No request body of the API nests more than a few levels; anything deeper is refused before
# a serializer (or the error formatter) walks it recursively.
MAX_JSON_DEPTH = 32


def _nested_deeper_than(data, limit: int) -> bool:
    # Iterative, so the check itself cannot run out of stack.
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return False


class BoundedJSONParser(JSONParser):
    """JSON bodies up to API_MAX_BODY_BYTES and MAX_JSON_DEPTH levels; anything bigger is a
    413 before parsing, anything deeper a 400.

    The size limit holds whether or not the client sent a Content-Length.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        too_deep = ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels.")
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            # The C decoder gives up at the interpreter's recursion limit (1000 by default).
            raise too_deep from None
        if _nested_deeper_than(data, MAX_JSON_DEPTH):
            raise too_deep
        return data
