from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from api.views import (
    advisor,
    catalog,
    invoices,
    legal,
    orders,
    payments,
    refunds,
    ssh_keys,
    webhooks,
)

app_name = "api"

v1 = [
    path("gpus/", catalog.GpuListApi.as_view(), name="gpu-list"),
    path("gpus/<slug:slug>/", catalog.GpuDetailApi.as_view(), name="gpu-detail"),
    path("environments/", catalog.EnvironmentListApi.as_view(), name="environment-list"),
    path("payment-assets/", payments.PaymentAssetListApi.as_view(), name="payment-asset-list"),
    path("terms/", legal.TermsApi.as_view(), name="terms"),
    path("quotes/", orders.QuoteApi.as_view(), name="quote"),
    path("advisor/", advisor.AdvisorApi.as_view(), name="advisor"),
    path("advisor/models/", advisor.AdvisorModelListApi.as_view(), name="advisor-models"),
    path("orders/", orders.OrderListApi.as_view(), name="order-list"),
    path("orders/<slug:number>/", orders.OrderDetailApi.as_view(), name="order-detail"),
    path("orders/<slug:number>/cancel/", orders.OrderCancelApi.as_view(), name="order-cancel"),
    path("orders/<slug:number>/paid/", orders.OrderPaidApi.as_view(), name="order-paid"),
    path(
        "orders/<slug:number>/extensions/",
        orders.OrderExtensionApi.as_view(),
        name="order-extensions",
    ),
    path(
        "orders/<slug:number>/refund-address/",
        refunds.OrderRefundAddressApi.as_view(),
        name="order-refund-address",
    ),
    path("invoices/", invoices.InvoiceListApi.as_view(), name="invoice-list"),
    path("invoices/<slug:number>/pdf/", invoices.InvoicePdfApi.as_view(), name="invoice-pdf"),
    path("ssh-keys/", ssh_keys.SshKeyListApi.as_view(), name="ssh-key-list"),
    path("ssh-keys/<int:key_id>/", ssh_keys.SshKeyDetailApi.as_view(), name="ssh-key-detail"),
    path("webhooks/", webhooks.WebhookEndpointListApi.as_view(), name="webhook-list"),
    path(
        "webhooks/<int:endpoint_id>/",
        webhooks.WebhookEndpointDetailApi.as_view(),
        name="webhook-detail",
    ),
    path(
        "webhooks/<int:endpoint_id>/resume/",
        webhooks.WebhookEndpointResumeApi.as_view(),
        name="webhook-resume",
    ),
    path(
        "webhooks/<int:endpoint_id>/deliveries/",
        webhooks.WebhookDeliveryListApi.as_view(),
        name="webhook-delivery-list",
    ),
    path(
        "webhooks/<int:endpoint_id>/deliveries/<uuid:delivery_id>/redeliver/",
        webhooks.WebhookRedeliverApi.as_view(),
        name="webhook-redeliver",
    ),
]

urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
]
