from django.urls import path

from billing import views

app_name = "billing"

urlpatterns = [
    path("", views.document_list, name="list"),
    path("<slug:number>/", views.document_detail, name="detail"),
    path("<slug:number>/pdf/", views.document_pdf_download, name="pdf"),
]
