from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from api.views import catalog, orders, payments

app_name = "api"

v1 = [
    path("gpus/", catalog.GpuListApi.as_view(), name="gpu-list"),
    path("gpus/<slug:slug>/", catalog.GpuDetailApi.as_view(), name="gpu-detail"),
    path("environments/", catalog.EnvironmentListApi.as_view(), name="environment-list"),
    path("payment-assets/", payments.PaymentAssetListApi.as_view(), name="payment-asset-list"),
    path("quotes/", orders.QuoteApi.as_view(), name="quote"),
    path("orders/", orders.OrderListApi.as_view(), name="order-list"),
    path("orders/<slug:number>/", orders.OrderDetailApi.as_view(), name="order-detail"),
    path("orders/<slug:number>/cancel/", orders.OrderCancelApi.as_view(), name="order-cancel"),
    path("orders/<slug:number>/paid/", orders.OrderPaidApi.as_view(), name="order-paid"),
]

urlpatterns = [
    path("v1/", include(v1)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
