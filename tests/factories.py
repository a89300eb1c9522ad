from datetime import timedelta
from decimal import Decimal

import factory
from allauth.account.models import EmailAddress
from django.utils import timezone

from accounts.models import User
from catalog.legal import TERMS_OF_SALE
from catalog.models import Environment, GpuModel, TermPrice
from hosts.models import Host
from hosts.slots import Slot, free_slots, slots_hold
from orders.consent import TermsAcceptance
from orders.models import HOLDING_STATUSES, Order
from orders.services import order_create


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"customer{n}@example.com")
    first_name = factory.Faker("first_name")
    last_name = factory.Faker("last_name")
    language = "fr"
    password = factory.PostGenerationMethodCall("set_password", "correct-Horse-battery-9")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()
            # As after sign-up: the address is verified, so logins and orders go through.
            EmailAddress.objects.create(user=obj, email=obj.email, verified=True, primary=True)


class GpuModelFactory(factory.django.DjangoModelFactory):
    """A GPU with a price for each term (longer terms cheaper per day)."""

    class Meta:
        model = GpuModel
        django_get_or_create = ("slug",)
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"test-gpu-{n}")
    name = factory.Sequence(lambda n: f"Test GPU {n}")
    architecture = "Hopper"
    memory_gb = 80
    memory_type = "HBM3"
    memory_bandwidth_gbps = 3350
    form_factor = GpuModel.FormFactor.SXM
    interconnect = "NVLink"
    precisions = "FP64, TF32, BF16, FP16, FP8"
    power_watts = 700
    units_total = 8
    tagline = "A test GPU"
    summary = "A GPU made for tests."

    @factory.post_generation
    def prices(obj, create, extracted, **kwargs):
        if not create:
            return
        rates = extracted or {3: Decimal("80.00"), 7: Decimal("72.00"), 30: Decimal("60.00")}
        for days, rate in rates.items():
            TermPrice.objects.update_or_create(
                gpu=obj, term_days=days, defaults={"daily_rate": rate}
            )

    @factory.post_generation
    def host(obj, create, extracted, **kwargs):
        """`units_total` GPUs in one manual host, as the data migration turns stock into."""
        if create and obj.units_total and not obj.hosts.exists():
            HostFactory(gpu=obj, gpu_count=obj.units_total)


class HostFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Host

    name = factory.Sequence(lambda n: f"test-host-{n}")
    region = "Paris"
    gpu = factory.SubFactory(GpuModelFactory, units_total=0)
    gpu_count = 8
    vcpus = 64
    ram_gb = 512
    disk_gb = 4000
    network = "25 Gbit/s"
    nvidia_driver_version = "550.127.05"
    cuda_max = Decimal("12.4")
    ssh_host = "gpu.example.test"


TEST_IMAGE = "registry.example.test/pytorch:2.5.1@sha256:" + "1" * 64


class EnvironmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Environment
        django_get_or_create = ("slug",)

    slug = "pytorch"
    name = "PyTorch"
    description = "CUDA, cuDNN and PyTorch ready to use."
    # The factory's environment needs no CUDA: stock tests count every host; the tests of
    # CUDA placement say what they need.
    image = factory.LazyAttribute(
        lambda env: "" if env.requires_details else TEST_IMAGE  # the customer's own has none
    )
    requires_details = False


class OrderFactory(factory.django.DjangoModelFactory):
    """An order awaiting payment, written directly (services are tested on their own)."""

    class Meta:
        model = Order
        skip_postgeneration_save = True

    number = factory.Sequence(lambda n: f"LG-TEST-{n:04d}")
    user = factory.SubFactory(UserFactory)
    gpu = factory.SubFactory(GpuModelFactory)
    environment = factory.SubFactory(EnvironmentFactory)
    quantity = 1
    term_days = 7
    daily_rate = Decimal("72.00")
    total = factory.LazyAttribute(lambda o: o.daily_rate * o.term_days * o.quantity)
    currency = "EUR"
    status = Order.Status.AWAITING_PAYMENT
    payment_deadline = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=30))

    @factory.post_generation
    def slots(obj, create, extracted, **kwargs):
        """A holding order holds slots, as order_create would give it (as many as are free:
        a test may overbook on purpose)."""
        if not create or obj.status not in HOLDING_STATUSES:
            return
        free = [
            (host, i)
            for host, indices in free_slots(gpu=obj.gpu, environment=obj.environment).items()
            for i in indices
        ][: obj.quantity]
        slots_hold(order=obj, slots=[Slot(host, i) for host, i in free])


def accepted_terms() -> TermsAcceptance:
    """The customer's acceptance of the terms of sale in force, which every order needs."""
    return TermsAcceptance(
        version=TERMS_OF_SALE.version, accepted_at=timezone.now(), ip_hash="0" * 64
    )


def order_placed(user, gpu, environment, **fields) -> Order:
    """orders.services.order_create with the terms accepted: one GPU for 7 days unless
    `fields` say otherwise."""
    defaults = {"terms": accepted_terms(), "quantity": 1, "term_days": 7}
    return order_create(user=user, gpu=gpu, environment=environment, **{**defaults, **fields})


# The configurator's terms-of-sale box, ticked: every form that orders sends it.
TERMS_TICKED = {"accept_terms": "on"}
