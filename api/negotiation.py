"""Content negotiation (REST_FRAMEWORK's DEFAULT_CONTENT_NEGOTIATION_CLASS)."""

from rest_framework.negotiation import DefaultContentNegotiation

# Accept headers (with the format asked and the view's renderers) remembered per process; a
# client sending new ones every time only empties the memory more often.
MAX_REMEMBERED = 256
# (Accept, format, renderer classes) -> (index of the renderer chosen, media type).
_chosen: dict[tuple, tuple[int, str]] = {}


class RememberingContentNegotiation(DefaultContentNegotiation):
    """DRF's, remembering which renderer it chose for each Accept header: a partner's software
    sends the same one on every request, and parsing it again cost as much as the rest of the
    authentication. A refusal (406) is worked out again every time."""

    def select_renderer(self, request, renderers, format_suffix=None):
        asked = format_suffix
        if asked is None and request.META.get("QUERY_STRING"):  # not parsed when there is none
            asked = request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        key = (
            request.META.get("HTTP_ACCEPT"),
            asked,
            tuple(type(renderer) for renderer in renderers),
        )
        chosen = _chosen.get(key)
        if chosen is not None:
            index, media_type = chosen
            return renderers[index], media_type
        renderer, media_type = super().select_renderer(request, renderers, format_suffix)
        if len(_chosen) >= MAX_REMEMBERED:
            _chosen.clear()
        _chosen[key] = (renderers.index(renderer), media_type)
        return renderer, media_type
