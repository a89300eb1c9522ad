"""The site's URLs plus the payment endpoints where the order page will mount them."""

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path

from rental.urls import urlpatterns as site_urlpatterns

urlpatterns = [
    *site_urlpatterns,
    *i18n_patterns(path("account/orders/<str:number>/payment/", include("payments.urls"))),
]
