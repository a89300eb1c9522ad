from django.urls import path

from orders import views

app_name = "orders"

urlpatterns = [
    path("gpus/<slug:slug>/configure/", views.configure, name="configure"),
    path("account/orders/pending/", views.place_pending, name="place_pending"),
    path("account/orders/", views.order_list, name="list"),
    path("account/orders/<str:number>/", views.order_detail, name="detail"),
    path("account/orders/<str:number>/status/", views.order_status, name="status"),
    path("account/orders/<str:number>/cancel/", views.order_cancel_view, name="cancel"),
    path("account/orders/<str:number>/stop/", views.order_stop_view, name="stop"),
    path("account/orders/<str:number>/extend/", views.order_extend_view, name="extend"),
    path("account/orders/<str:number>/journal.json", views.order_journal_json, name="journal"),
]
