from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import (
    TranslationAdmin,
    TranslationStackedInline,
    TranslationTabularInline,
)

from catalog.hooks import availability_annotate
from catalog.models import AdviceSection, Alternative, Environment, GpuModel, TermPrice


class TermPriceInline(admin.TabularInline):
    model = TermPrice
    extra = 0
    max_num = 3


class AdviceSectionInline(TranslationStackedInline):
    model = AdviceSection
    extra = 0


class AlternativeInline(TranslationTabularInline):
    model = Alternative
    # Alternative has two foreign keys to GpuModel; the inline belongs to the source GPU.
    fk_name = "gpu"
    extra = 0
    autocomplete_fields = ["target"]


@admin.register(GpuModel)
class GpuModelAdmin(TranslationAdmin):
    list_display = [
        "name",
        "slug",
        "memory_gb",
        "units_total",
        "available_now",
        "is_active",
        "display_order",
    ]
    list_editable = ["is_active", "display_order"]
    # Stock is the slots of active hosts: staff change it by editing hosts (orders).
    readonly_fields = ["units_total"]
    list_filter = ["is_active", "architecture", "form_factor"]
    search_fields = ["name", "slug", "architecture"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [TermPriceInline, AdviceSectionInline, AlternativeInline]
    fieldsets = [
        (None, {"fields": ["name", "slug", "is_active", "display_order", "units_total"]}),
        (_("Specifications"), {"fields": list(GpuModel.SPECIFICATION_FIELDS)}),
        (_("Texts"), {"fields": ["tagline", "summary"]}),
    ]

    def get_queryset(self, request):
        # The availability annotation lets staff see free units next to the stock they edit.
        gpus = availability_annotate(GpuModel.objects.all())
        return gpus.order_by(*self.get_ordering(request) or ())

    @admin.display(description=_("available now"), ordering="available_units")
    def available_now(self, gpu: GpuModel) -> int:
        return gpu.available_units  # type: ignore[attr-defined]  # annotated (get_queryset)


@admin.register(Environment)
class EnvironmentAdmin(TranslationAdmin):
    list_display = [
        "name",
        "slug",
        "image",
        "cuda_required",
        "requires_details",
        "is_active",
        "display_order",
    ]
    list_editable = ["is_active", "display_order"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
