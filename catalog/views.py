from functools import wraps

from django.conf import settings
from django.contrib.messages import get_messages
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_page

from catalog.advisor import recommend_gpus
from catalog.comparison import bar_chart, comparison_rows
from catalog.forms import AdvisorForm, ModelAdvisorForm
from catalog.legal import LEGAL_DOCUMENTS, ORDER_CONSENT, legal_document_by_slug
from catalog.memory import layer_activations_gb
from catalog.model_advisor import advise
from catalog.models import TERMS, GpuModel
from catalog.selectors import (
    active_environments,
    catalog_gpus,
    gpu_offers,
    gpu_page,
    gpus_by_slugs,
)
from catalog.training_stacks import PRESETS, SHARDING_LABELS, STACK_LABELS


def cached_for_visitors(view):
    """`view` through Django's per-view cache for anonymous visitors, for
    CATALOG_PAGE_CACHE_SECONDS, in each process's memory (settings.CATALOG_PAGE_CACHE): stock
    and prices shown a few seconds late at most (an order checks them again under its lock),
    nothing any writer has to tell. A signed-in page, one with a query or a one-off message is
    someone's own and renders every time."""
    cached = cache_page(settings.CATALOG_PAGE_CACHE_SECONDS, cache=settings.CATALOG_PAGE_CACHE)(
        view
    )

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.user.is_authenticated or request.GET or len(get_messages(request)):
            return view(request, *args, **kwargs)
        return cached(request, *args, **kwargs)

    return wrapper


@cached_for_visitors
def home(request):
    return render(request, "catalog/home.html", {"gpus": catalog_gpus()})


@cached_for_visitors
def gpu_detail(request, slug):
    try:
        gpu = gpu_page(slug=slug)
    except GpuModel.DoesNotExist:
        raise Http404(_("No GPU on sale at this address.")) from None
    context = {"gpu": gpu, "terms": TERMS, "environments": active_environments()}
    return render(request, "catalog/gpu_detail.html", context)


@cached_for_visitors
def compare(request):
    rows = comparison_rows(catalog_gpus())
    priced = [row for row in rows if row.price_per_gb is not None]
    context = {
        "rows": rows,
        "memory_chart": bar_chart([(row.gpu.name, row.gpu.memory_gb) for row in rows]),
        "price_per_gb_chart": bar_chart([(row.gpu.name, row.price_per_gb or 0) for row in priced]),
    }
    return render(request, "catalog/compare.html", context)


def advisor(request):
    # GET keeps a recommendation shareable as a link; POST is accepted for plain forms.
    data = request.POST if request.method == "POST" else request.GET
    form = AdvisorForm(data or None)
    recommendation = None
    gpus = []
    if form.is_valid():
        recommendation = recommend_gpus(**form.cleaned_data)
        gpus = gpus_by_slugs(slugs=recommendation.slugs)
    context = {"form": form, "recommendation": recommendation, "recommended_gpus": gpus}
    return render(request, "catalog/advisor.html", context)


def model_advisor(request):
    """The advisor for a job described by its model: the estimate, explained, and the GPUs.
    A GET form, so that an answer is a link to share."""
    form = ModelAdvisorForm(request.GET or None)
    context: dict[str, object] = {"form": form, "advice": None, "layer_activations": None}
    if form.is_valid():
        job = form.cleaned_data["job_spec"]
        advice = advise(job=job, offers=gpu_offers())
        estimate, cards = advice.plan.estimate, max(advice.plan.quantity, 1)
        context.update(
            advice=advice,
            part_rows=[
                {"part": part, "per_gpu": estimate.part_gb(part, cards)} for part in estimate.parts
            ],
            gathered_gb=estimate.gathered_gb(cards),
            stack_name=STACK_LABELS[job.stack],
            stack_source=PRESETS[job.stack].source,
            sharding_name=SHARDING_LABELS[job.sharding],
        )
        if job.trains:
            context["layer_activations"] = layer_activations_gb(job)
    return render(request, "catalog/model_advisor.html", context)


def legal(request, slug):
    """A legal text in the page's language; every version is listed on each page."""
    document = legal_document_by_slug(slug)
    if document is None:
        raise Http404(_("No legal text at this address."))
    language = get_language()
    if language not in dict(settings.LANGUAGES):
        language = settings.LANGUAGE_CODE
    # The seller the invoices name (billing's settings), with its address on one line.
    seller = settings.BILLING_SELLER
    context = {
        "document": document,
        "documents": LEGAL_DOCUMENTS.values(),
        "body_template": document.template_name(language),
        "order_consent": ORDER_CONSENT,
        "seller": {
            **seller,
            "address": f"{seller['street']}, {seller['postcode']} {seller['city']}",
            "publication_director": settings.STORE_PUBLICATION_DIRECTOR,
            "hosting_provider": settings.STORE_HOSTING_PROVIDER,
            "mediator_name": settings.STORE_MEDIATOR_NAME,
            "mediator_url": settings.STORE_MEDIATOR_URL,
        },
        "payment_window_minutes": int(settings.ORDER_PAYMENT_WINDOW.total_seconds() // 60),
        "currency": settings.STORE_CURRENCY,
        "retention_days": settings.RENTAL_DATA_RETENTION_DAYS,
    }
    return render(request, "catalog/legal.html", context)
