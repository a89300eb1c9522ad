"""Production's two database roles, on the real PostgreSQL: migrated as the owner, the app's
role reads and writes rows but can neither TRUNCATE the factures nor disable their triggers."""

import os
import secrets
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import psycopg2
import pytest
from django.db import connection
from psycopg2 import errors, sql

from tests.drills.processes import database_url

ROOT = Path(__file__).resolve().parents[2]


def _admin(database: str = "postgres"):
    params = connection.get_connection_params()
    raw = psycopg2.connect(**{**params, "dbname": database, "options": ""})
    raw.autocommit = True
    return raw


@pytest.fixture
def roles(db):
    """A throwaway database with its owner and the app's role, dropped at the end."""
    suffix = secrets.token_hex(4)
    database, owner, app = f"roles_{suffix}", f"owner_{suffix}", f"app_{suffix}"
    with closing(_admin()) as admin, admin.cursor() as cursor:
        for role in (owner, app):
            cursor.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(role)
                )
            )
        cursor.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(owner)
            )
        )
    settings_dict = {**connection.settings_dict, "NAME": database}
    try:
        yield {
            "database": database,
            "owner_url": database_url({**settings_dict, "USER": owner, "PASSWORD": owner}),
            "app": app,
            "app_url": database_url({**settings_dict, "USER": app, "PASSWORD": app}),
        }
    finally:
        with closing(_admin()) as admin, admin.cursor() as cursor:
            cursor.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )
            for role in (app, owner):
                cursor.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def _manage(*args: str, url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "rental.settings.local", "DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_app_role_writes_rows_but_cannot_truncate_nor_disable_triggers(roles):
    migrated = _manage("migrate", "--no-input", url=roles["owner_url"])
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    granted = _manage("grant_app_role", roles["app"], url=roles["owner_url"])
    assert granted.returncode == 0, granted.stderr[-3000:]
    # What the app does: a row written, read back and changed, through its own role.
    seeded = _manage("seed_catalog", "--if-empty", url=roles["app_url"])
    assert seeded.returncode == 0, seeded.stderr[-3000:]

    with psycopg2.connect(roles["app_url"]) as app, app.cursor() as cursor:
        cursor.execute("UPDATE catalog_gpumodel SET tagline = tagline || '' RETURNING id")
        assert cursor.fetchall()
        cursor.execute("SELECT count(*) FROM billing_billingdocument")
        assert cursor.fetchone() == (0,)
    for forbidden in (
        "TRUNCATE billing_billingdocument",
        "ALTER TABLE billing_billingdocument DISABLE TRIGGER ALL",
        "ALTER TABLE billing_billingdocument DISABLE TRIGGER USER",
    ):
        with (
            psycopg2.connect(roles["app_url"]) as app,
            app.cursor() as cursor,
            pytest.raises(errors.InsufficientPrivilege),
        ):
            cursor.execute(forbidden)
