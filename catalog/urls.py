from django.urls import path

from catalog import views

app_name = "catalog"

urlpatterns = [
    path("", views.home, name="home"),
    # Before the GPU page, whose slug pattern would otherwise swallow "compare".
    path("gpus/compare/", views.compare, name="compare"),
    path("gpus/<slug:slug>/", views.gpu_detail, name="gpu_detail"),
    path("advisor/", views.advisor, name="advisor"),
    path("advisor/model/", views.model_advisor, name="model_advisor"),
    path("legal/<slug:slug>/", views.legal, name="legal"),
]
