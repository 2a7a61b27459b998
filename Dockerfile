# memoryadmin: one image for the web server, the Celery worker, beat and the migrate job.
FROM python:3.11-slim-bookworm

# MALLOC_MMAP_THRESHOLD_: request bodies of a few MiB are given back to the system when freed,
# not kept on the heap after a load (as bin/serve sets it; glibc reads it at a process start).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MALLOC_MMAP_THRESHOLD_=131072

WORKDIR /app
RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin memoryadmin \
    && mkdir -p /var/lib/memoryadmin \
    && chown memoryadmin /var/lib/memoryadmin

# Dependencies first, in their own layer (installed with placeholder packages): a code
# change does not reinstall them.
COPY pyproject.toml ./
RUN mkdir memoryadmin stores \
    && touch memoryadmin/__init__.py stores/__init__.py \
    && pip install . \
    && rm -rf memoryadmin stores build

COPY . .
# Editable: the code runs from /app, where the templates and static folders live beside it.
RUN pip install --no-deps -e .

# Static files are collected into the image and served by WhiteNoise with hashed names.
# collectstatic reads the settings, which in production insist on every required variable:
# placeholders here, never used to connect anywhere.
ENV MEMORYADMIN_STATIC_ROOT=/app/staticfiles \
    MEMORYADMIN_DATA_DIR=/var/lib/memoryadmin
RUN MEMORYADMIN_ENV=production \
    MEMORYADMIN_SECRET_KEY=collectstatic-only \
    MEMORYADMIN_ALLOWED_HOSTS=localhost \
    MEMORYADMIN_DATABASE_URL=postgres://build@localhost/build \
    MEMORYADMIN_BROKER_URL=redis://localhost:6379/0 \
    python manage.py collectstatic --no-input -v0

USER memoryadmin
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "memoryadmin.asgi:application"]
