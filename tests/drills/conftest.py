import os
import signal

import pytest
from django.db import connection

from tests.cache import cache_pointed_at
from tests.drills.processes import (
    CeleryWorker,
    ManagedProcess,
    RedisServer,
    broker_of_this_process,
    database_url,
)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/drills/" in str(item.fspath):
            item.add_marker(pytest.mark.drill)


@pytest.fixture
def redis_server():
    """A throwaway Redis of this test's own, to crash and restart at will."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def broker(redis_server):
    """This process queues its tasks on the throwaway Redis, for real workers to run: not
    inline, even after the devnet fixture asked for eager tasks."""
    with broker_of_this_process(redis_server.url) as app:
        eager = app.conf.task_always_eager
        app.conf.task_always_eager = False
        try:
            yield redis_server
        finally:
            app.conf.task_always_eager = eager


@pytest.fixture
def worker_factory(transactional_db, broker, tmp_path):
    """Workers on the test database and the throwaway broker; all stopped at the end, before
    the database is flushed."""
    workers: list[CeleryWorker] = []

    def make(**options) -> CeleryWorker:
        """Options: `queues`, `concurrency`, and environment variables for the worker."""
        worker = CeleryWorker(
            broker_url=broker.url,
            database_url=database_url(connection.settings_dict),
            workdir=tmp_path / f"worker{len(workers)}",
            **options,
        )
        workers.append(worker)
        return worker

    try:
        yield make
    finally:
        for worker in workers:
            worker.stop()


@pytest.fixture
def process_factory(transactional_db, broker, tmp_path):
    """Long-running processes (head follower, beat) on the test database and broker; all
    stopped at the end, before the database is flushed."""
    processes: list[ManagedProcess] = []

    def make(command: list[str], **env) -> ManagedProcess:
        process = ManagedProcess(
            command,
            database_url=database_url(connection.settings_dict),
            broker_url=broker.url,
            workdir=tmp_path / f"process{len(processes)}",
            **env,
        )
        processes.append(process)
        return process

    try:
        yield make
    finally:
        for process in processes:
            process.stop()


@pytest.fixture
def shared_redis(redis_server, settings):
    """The throwaway Redis as the cache (with production's options) and the broker (with
    production's transport options), as a web process uses them; resumed at the end
    whatever happened (a drill stops it)."""
    cache_pointed_at(settings, redis_server.url[:-1] + "1", settings.REDIS_CACHE_OPTIONS)
    settings.CELERY_BROKER_URL = redis_server.url
    with broker_of_this_process(redis_server.url) as app:
        saved = app.conf.broker_transport_options, app.conf.task_always_eager
        app.conf.broker_transport_options = settings.REDIS_BROKER_TRANSPORT_OPTIONS
        app.conf.task_always_eager = False
        try:
            yield redis_server
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)
            app.conf.broker_transport_options, app.conf.task_always_eager = saved
