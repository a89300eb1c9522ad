FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# Pango and a font: WeasyPrint draws the invoices' PDF with them.
RUN apt-get update && apt-get install -y --no-install-recommends gettext libpango-1.0-0 \
    libpangoft2-1.0-0 fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
# The runtime dependencies alone (`make lock`): no test runner, browser driver or type checker.
COPY requirements-runtime.lock .
RUN pip install --no-cache-dir -r requirements-runtime.lock
COPY . .
# Build steps need no secret: local settings, only to compile translations and gather statics.
RUN DJANGO_SETTINGS_MODULE=rental.settings.local python manage.py compilemessages -v0 \
    && DJANGO_SETTINGS_MODULE=rental.settings.local python manage.py collectstatic --no-input -v0
# Every process of the image (gunicorn, Celery, manage.py) runs production settings, which
# refuse to start without the variables they need (see README, Configuration).
ENV DJANGO_SETTINGS_MODULE=rental.settings.production
# The code stays root-owned and read-only to the app; only var/ is its to write.
RUN useradd --system --uid 10001 --home-dir /app --no-create-home app \
    && mkdir -p var && chown app:app var
USER app
EXPOSE 8000
CMD ["gunicorn", "rental.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "30"]
