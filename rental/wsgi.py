import os

from django.core.wsgi import get_wsgi_application

# Servers (gunicorn, Celery) run production unless told otherwise; manage.py stays on local.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rental.settings.production")

application = get_wsgi_application()
