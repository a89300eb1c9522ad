from django.shortcuts import get_object_or_404, render

from catalog.models import GpuModel


def configure(request, slug):
    gpu = get_object_or_404(GpuModel, slug=slug, is_active=True)
    return render(request, "orders/configure.html", {"gpu": gpu})
