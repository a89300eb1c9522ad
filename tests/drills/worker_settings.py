"""Settings of the Celery workers the drills start: the test settings, with e-mails written
to files (DRILL_EMAIL_DIR) so the test process can count what a worker sent."""

from rental.settings.test import *  # noqa: F403
from rental.settings.test import env

EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_FILE_PATH = env("DRILL_EMAIL_DIR")
