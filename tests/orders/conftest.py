import pytest

from tests.factories import EnvironmentFactory, GpuModelFactory


@pytest.fixture
def pytorch(db):
    return EnvironmentFactory(slug="pytorch", name="PyTorch", requires_details=False)


@pytest.fixture
def custom_env(db):
    return EnvironmentFactory(
        slug="custom", name="Custom", description="Your own image.", requires_details=True
    )


@pytest.fixture
def gpu(db, pytorch, custom_env):
    return GpuModelFactory(slug="h100-sxm", name="H100 SXM 80 GB", units_total=8)


@pytest.fixture
def eager_celery(settings):
    """Run queued tasks inline, so after-commit side effects (e-mails) happen in the test."""
    from rental.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False
