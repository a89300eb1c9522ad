from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from hosts.capacity import HostError, host_check, host_save
from hosts.models import Host, SlotHold


class HostForm(forms.ModelForm):
    class Meta:
        model = Host
        fields = [
            "name",
            "gpu",
            "gpu_count",
            "region",
            "is_active",
            "vcpus",
            "ram_gb",
            "disk_gb",
            "network",
            "nvidia_driver_version",
            "cuda_max",
            "ssh_host",
            "ssh_port",
            "provisioning",
            "provisioning_user",
        ]

    def clean(self):
        cleaned = super().clean() or {}
        if not self.errors:
            # The instance gets the form's values only after clean(): check what is asked.
            asked = Host(pk=self.instance.pk, gpu=cleaned["gpu"], gpu_count=cleaned["gpu_count"])
            try:
                host_check(host=asked)
            except HostError as error:
                self.add_error(error.field, error.message)
        return cleaned


class HeldSlotInline(admin.TabularInline):
    model = SlotHold
    fk_name = "host"
    verbose_name_plural = _("held slots")
    fields = readonly_fields = ("index", "order", "held_at")
    extra = 0
    can_delete = False

    def get_queryset(self, request):
        held = super().get_queryset(request).filter(released_at__isnull=True)
        return held.select_related("order", "host")  # the host names each row

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    form = HostForm
    list_display = [
        "name",
        "gpu",
        "gpu_count",
        "region",
        "nvidia_driver_version",
        "cuda_max",
        "provisioning",
        "is_active",
    ]
    list_filter = ["gpu", "region", "provisioning", "is_active"]
    search_fields = ["name", "ssh_host"]
    inlines = [HeldSlotInline]
    fieldsets = [
        (None, {"fields": ["name", "gpu", "gpu_count", "region", "is_active"]}),
        (_("Machine"), {"fields": ["vcpus", "ram_gb", "disk_gb", "network"]}),
        (_("NVIDIA driver"), {"fields": ["nvidia_driver_version", "cuda_max"]}),
        (
            _("Access"),
            {"fields": ["ssh_host", "ssh_port", "provisioning", "provisioning_user"]},
        ),
    ]

    def save_model(self, request, obj, form, change):
        # Keeps the GPU model's stock figure in step (hosts.capacity).
        host_save(host=obj)

    def has_delete_permission(self, request, obj=None):
        return False  # a host with history stays: deactivate it instead


class OrderSlotInline(admin.TabularInline):
    model = SlotHold
    fk_name = "order"
    verbose_name_plural = _("slots")
    fields = readonly_fields = ("host", "index", "held_at", "released_at")
    extra = 0
    can_delete = False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("host")  # each row's name and link

    def has_add_permission(self, request, obj=None):
        return False
