"""A rolling deploy runs two releases at once on one cache: neither reads what the other stored
as if it were its own (the release is in every key: settings.CACHES VERSION)."""

from django.conf import settings
from django.core.cache import cache

from rental.release import code_release


def test_every_cache_key_holds_the_release(tmp_path):
    assert settings.RELEASE in cache.make_key("anything")
    (tmp_path / "app.py").write_text("A = 1\n")
    before = code_release(tmp_path)
    (tmp_path / "app.py").write_text("A = 2\n")
    assert code_release(tmp_path) != before
