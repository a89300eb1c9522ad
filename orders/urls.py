from django.urls import path

from orders import views

app_name = "orders"

urlpatterns = [
    path("gpus/<slug:slug>/configure/", views.configure, name="configure"),
    path("account/orders/pending/", views.place_pending, name="place_pending"),
    path("account/orders/", views.order_list, name="list"),
    path("account/orders/<slug:number>/", views.order_detail, name="detail"),
    path("account/orders/<slug:number>/status/", views.order_status, name="status"),
    path("account/orders/<slug:number>/cancel/", views.order_cancel_view, name="cancel"),
    path("account/orders/<slug:number>/keys/", views.order_keys_view, name="keys"),
    path("account/orders/<slug:number>/stop/", views.order_stop_view, name="stop"),
    path("account/orders/<slug:number>/extend/", views.order_extend_view, name="extend"),
    path("account/orders/<slug:number>/journal.json", views.order_journal_json, name="journal"),
]
