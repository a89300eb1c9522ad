import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rental.settings.local")

app = Celery("rental")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="rental.ping")
def ping() -> str:
    """Smallest possible round trip through the broker and a worker."""
    return "pong"
