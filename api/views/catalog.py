"""Catalog reads: GPUs with live availability and prices, environments."""

from django.conf import settings
from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.selectors import api_environments, api_gpus
from api.views.base import ApiView

GPU_EXAMPLE = {
    "slug": "h100-sxm",
    "name": "NVIDIA H100 SXM 80 GB",
    "architecture": "Hopper",
    "memory_gb": 80,
    "form_factor": "sxm",
    "available_units": 6,
    "machine": {"vcpus": 32, "ram_gb": 256, "disk_gb": 2000, "region": "Paris"},
    "currency": "EUR",
    "prices": [
        {"term_days": 3, "daily_rate": "79.00", "hourly_rate": "3.29", "total_per_gpu": "237.00"},
        {"term_days": 7, "daily_rate": "72.00", "hourly_rate": "3.00", "total_per_gpu": "504.00"},
        {"term_days": 30, "daily_rate": "61.00", "hourly_rate": "2.54", "total_per_gpu": "1830.00"},
    ],
}


class TermPriceSerializer(serializers.Serializer):
    term_days = serializers.IntegerField(help_text="3, 7 or 30.")
    daily_rate = serializers.DecimalField(max_digits=10, decimal_places=2)
    hourly_rate = serializers.DecimalField(
        max_digits=10,
        decimal_places=2,
        help_text="daily_rate / 24, rounded half up to the cent: for comparison only, "
        "rentals are billed by the day.",
    )
    total_per_gpu = serializers.DecimalField(
        max_digits=12, decimal_places=2, help_text="Daily rate x term, for one GPU."
    )

    class Meta:
        ref_name = "TermPrice"


class MachineOutputSerializer(serializers.Serializer):
    """The smallest machine of the model: an order gets at least this, whichever host."""

    vcpus = serializers.IntegerField(source="machine_vcpus", allow_null=True)
    ram_gb = serializers.IntegerField(source="machine_ram_gb", allow_null=True)
    disk_gb = serializers.IntegerField(
        source="machine_disk_gb", allow_null=True, help_text="NVMe disk."
    )
    region = serializers.CharField(
        source="machine_regions", allow_null=True, help_text="Regions, comma separated."
    )

    class Meta:
        ref_name = "Machine"


class GpuOutputSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    architecture = serializers.CharField()
    memory_gb = serializers.IntegerField()
    form_factor = serializers.CharField(help_text="`sxm` or `pcie`.")
    available_units = serializers.IntegerField(help_text="Units free to order right now.")
    machine = MachineOutputSerializer(
        source="*", help_text="From: the smallest machine hosting this model (null specs unknown)."
    )
    currency = serializers.SerializerMethodField(help_text="Currency of the prices.")
    prices = TermPriceSerializer(many=True)

    class Meta:
        ref_name = "Gpu"

    def get_currency(self, gpu) -> str:
        return settings.STORE_CURRENCY


class GpuListApi(ApiView):
    @extend_schema(
        operation_id="gpus_list",
        summary="List the GPUs on sale",
        description=(
            "Every GPU model on sale with its units available right now and its daily rate "
            "for each term. Decimals are strings."
        ),
        responses=GpuOutputSerializer(many=True),
        examples=[OpenApiExample("GPUs", value=GPU_EXAMPLE, response_only=True)],
        tags=["catalog"],
    )
    def get(self, request):
        return Response(GpuOutputSerializer(api_gpus(), many=True).data)


class GpuDetailApi(ApiView):
    @extend_schema(
        operation_id="gpus_retrieve",
        summary="One GPU",
        description="A GPU model by slug (`h100-sxm`, `rtx-4090`…), with availability and prices.",
        responses=GpuOutputSerializer,
        examples=[OpenApiExample("H100 SXM", value=GPU_EXAMPLE, response_only=True)],
        tags=["catalog"],
    )
    def get(self, request, slug: str):
        gpu = api_gpus().filter(slug=slug).first()
        if gpu is None:
            raise Http404
        return Response(GpuOutputSerializer(gpu).data)


class EnvironmentListApi(ApiView):
    class OutputSerializer(serializers.Serializer):
        slug = serializers.SlugField()
        name = serializers.CharField()
        requires_details = serializers.BooleanField(
            help_text=(
                "When true, orders give in `environment_details` an image reference "
                "(`registry/name:tag` or `name@sha256:<64 hex>`) or a requirements file."
            )
        )
        image = serializers.CharField(help_text="The image, pinned by digest; empty for custom.")
        os = serializers.CharField(source="os_name")
        python = serializers.CharField(source="python_version")
        cuda = serializers.CharField(source="cuda_version")
        cudnn = serializers.CharField(source="cudnn_version")
        pytorch = serializers.CharField(source="pytorch_version")
        jupyterlab = serializers.CharField(source="jupyterlab_version")
        cuda_required = serializers.DecimalField(
            max_digits=4,
            decimal_places=1,
            allow_null=True,
            help_text="The CUDA version a host's driver must support to run it; null: none.",
        )

        class Meta:
            ref_name = "Environment"

    @extend_schema(
        operation_id="environments_list",
        summary="List the environments",
        description=(
            "What a rental's container starts from, with the versions its image holds: "
            "`pytorch` (ready to use) or `custom` (your image or requirements file in "
            "`environment_details`). A GPU whose machines support less CUDA than "
            "`cuda_required` is refused for it (400, `cuda_unsupported`)."
        ),
        responses=OutputSerializer(many=True),
        examples=[
            OpenApiExample(
                "Environments",
                value={
                    "slug": "pytorch",
                    "name": "PyTorch",
                    "requires_details": False,
                    "image": "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:…",
                    "os": "Ubuntu 22.04",
                    "python": "3.11",
                    "cuda": "12.4",
                    "cudnn": "9.1",
                    "pytorch": "2.5.1",
                    "jupyterlab": "4.2",
                    "cuda_required": "12.4",
                },
                response_only=True,
            )
        ],
        tags=["catalog"],
    )
    def get(self, request):
        return Response(self.OutputSerializer(api_environments(), many=True).data)
