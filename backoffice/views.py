from collections.abc import Sequence
from decimal import Decimal

from django.contrib import admin
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from backoffice.selectors import (
    DASHBOARD_DAYS,
    gpu_in_use,
    gpu_utilisation,
    orders_by_status,
    payments_by_asset,
    revenue_per_day,
)
from catalog.comparison import bar_chart

# Wider than the comparison page's: GPU names and networks are long, staff use a desktop.
CHART = {"width": 640, "label_width": 220, "value_width": 110}


def dashboard(request):
    now = timezone.now()
    today = timezone.localdate(now)
    revenue = [
        (date_format(day, "SHORT_DATE_FORMAT"), amount)
        for day, amount in revenue_per_day(today=today)
    ]
    charts: list[tuple[str, str, str, Sequence[tuple[str, Decimal | int]]]] = [
        ("chart-revenue", _("Revenue per day (last %(days)d days)"), "money", revenue),
        (
            "chart-in-use",
            _("GPUs rented now (share of each model's slots held by paid or running rentals)"),
            "percent",
            gpu_in_use(now=now),
        ),
        (
            "chart-utilisation",
            _("GPU utilisation per model (share of slot time held, last %(days)d days)"),
            "percent",
            gpu_utilisation(now=now),
        ),
        ("chart-orders", _("Orders by status"), "count", orders_by_status()),
        ("chart-payments", _("Payments by asset (paid invoices)"), "money", payments_by_asset()),
    ]
    context = {
        **admin.site.each_context(request),
        "title": _("Dashboard"),
        "charts": [
            {
                "id": chart_id,
                "title": title % {"days": DASHBOARD_DAYS} if "%(days)" in title else title,
                "kind": kind,
                "chart": bar_chart(items, **CHART),
                "empty": not items,
            }
            for chart_id, title, kind, items in charts
        ],
    }
    return render(request, "backoffice/dashboard.html", context)
