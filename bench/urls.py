"""The project's URLs plus a trivial view: the baseline the pages are compared with."""

from django.http import HttpResponse
from django.urls import path

from bench.common import TRIVIAL_PATH
from rental.urls import handler404, handler500
from rental.urls import urlpatterns as project_urlpatterns


def trivial(request):
    """No database, no template: what the server and middleware cost on their own."""
    return HttpResponse(b"ok", content_type="text/plain")


urlpatterns = [path(TRIVIAL_PATH.lstrip("/"), trivial), *project_urlpatterns]

__all__ = ["handler404", "handler500", "urlpatterns"]
