"""The back office's admin site: staff get in only with a verified second factor."""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig


class StaffAdminSite(admin.AdminSite):
    def has_permission(self, request) -> bool:
        # The middleware (accounts.middleware.SecondFactorMiddleware) sends staff to enrol
        # or verify first; this holds even for a view that middleware would not see.
        return super().has_permission(request) and request.user.is_verified()


class StaffAdminConfig(AdminConfig):
    default_site = "rental.admin_site.StaffAdminSite"
