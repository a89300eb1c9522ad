FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends gettext && rm -rf /var/lib/apt/lists/*
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
RUN DJANGO_SETTINGS_MODULE=rental.settings.local python manage.py compilemessages -v0 \
    && DJANGO_SETTINGS_MODULE=rental.settings.local python manage.py collectstatic --no-input -v0
EXPOSE 8000
CMD ["gunicorn", "rental.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
