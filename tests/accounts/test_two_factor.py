"""Two-factor login: staff pass a second factor before any admin page, customers may ask
for one; wrong codes are throttled, recovery codes work once, a lost device is reset."""

import logging
import re
from io import StringIO

import pytest
from django.contrib import admin
from django.core.management import CommandError, call_command
from django.urls import reverse
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.services import api_key_create
from accounts.two_factor import RECOVERY_CODE_COUNT, recovery_codes_renew, two_factor_enabled
from tests.accounts.two_factor import authenticator_for, totp_code
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ENROL = "/account/security/enrol/"
VERIFY = "/account/security/verify/"


def admin_pages() -> list[str]:
    """The admin's index, its dashboard and the changelist of every model it shows."""
    changelists = [
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    ]
    return [reverse("admin:index"), reverse("backoffice_dashboard"), *changelists]


def recovery_codes_in(response) -> list[str]:
    return re.findall(r"<li><code>([a-z2-7]{8})</code></li>", response.content.decode())


def test_every_admin_page_sends_staff_without_a_second_factor_to_enrol(client, staff):
    client.force_login(staff, second_factor=False)
    pages = admin_pages()
    assert len(pages) > 10
    for url in pages:
        response = client.get(url)
        assert response.status_code == 302, url
        assert ENROL in response["Location"] and "next=" in response["Location"], url
    assert not TOTPDevice.objects.filter(user=staff, confirmed=True).exists()


def test_staff_enrol_with_a_code_from_their_app_then_the_admin_opens(client, staff, password):
    client.force_login(staff, second_factor=False)
    enrol_url = client.get("/admin/orders/order/")["Location"]
    page = client.get(enrol_url)
    assert page.status_code == 200
    assert "<svg" in page.content.decode() and 'name="code"' in page.content.decode()
    pending = TOTPDevice.objects.get(user=staff, confirmed=False)
    assert pending.config_url.startswith("otpauth://totp/LocaGPU")

    codes_page = client.post(enrol_url, {"password": password, "code": totp_code(pending)})

    assert codes_page.status_code == 200
    codes = recovery_codes_in(codes_page)
    assert len(codes) == RECOVERY_CODE_COUNT
    assert 'href="/admin/orders/order/"' in codes_page.content.decode()
    assert two_factor_enabled(user=staff)
    assert client.get("/admin/orders/order/").status_code == 200
    assert client.get("/admin/").status_code == 200


def test_enrolment_refuses_a_wrong_code_and_keeps_the_admin_shut(client, staff, password):
    client.force_login(staff, second_factor=False)
    client.get("/en" + ENROL)
    refused = client.post("/en" + ENROL, {"password": password, "code": "000000"})
    assert refused.status_code == 400
    assert "This code is not valid" in refused.content.decode()
    assert not two_factor_enabled(user=staff)
    assert ENROL in client.get("/admin/")["Location"]


def test_staff_with_an_authenticator_type_its_code_before_the_admin(client, staff):
    device = authenticator_for(staff)
    client.force_login(staff, second_factor=False)
    to_verify = client.get("/admin/payments/invoice/")
    assert to_verify.status_code == 302 and VERIFY in to_verify["Location"]
    # Enrolling a second authenticator is no way round the code.
    assert VERIFY in client.get("/en" + ENROL)["Location"]

    verified = client.post(to_verify["Location"], {"code": totp_code(device)})

    assert verified.status_code == 302 and verified["Location"] == "/admin/payments/invoice/"
    assert client.get("/admin/payments/invoice/").status_code == 200


def test_a_wrong_code_makes_the_next_one_wait(client, customer):
    device = authenticator_for(customer)
    client.force_login(customer, second_factor=False)

    wrong = client.post("/en" + VERIFY, {"code": "123456"})
    right_too_soon = client.post("/en" + VERIFY, {"code": totp_code(device)})

    assert wrong.status_code == 400 and "This code is not valid" in wrong.content.decode()
    assert right_too_soon.status_code == 429
    assert "Too many wrong codes: wait" in right_too_soon.content.decode()
    assert client.get("/en/account/").status_code == 302


def test_codes_tried_are_limited_per_account(client, customer, settings):
    settings.TWO_FACTOR_RATE_LIMIT = {"limit": 3, "period": 300}
    device = authenticator_for(customer)
    client.force_login(customer, second_factor=False)
    for _attempt in range(3):
        client.post("/en" + VERIFY, {"code": "not-a-code"})
    device.throttle_reset()

    limited = client.post("/en" + VERIFY, {"code": totp_code(device)})

    assert limited.status_code == 429
    assert "Too many codes tried" in limited.content.decode()
    assert client.get("/en/account/").status_code == 302


def test_codes_tried_are_limited_per_client_address(client, customer, outsider, settings):
    settings.TWO_FACTOR_IP_RATE_LIMIT = {"limit": 2, "period": 300}
    for user in (customer, outsider):
        authenticator_for(user)
        client.force_login(user, second_factor=False)
        response = client.post("/en" + VERIFY, {"code": "999999"})
    assert response.status_code == 400
    limited = client.post("/en" + VERIFY, {"code": "999999"})
    assert limited.status_code == 429 and "Too many codes tried" in limited.content.decode()


def test_a_recovery_code_works_once(client, staff):
    authenticator_for(staff)
    code = recovery_codes_renew(user=staff)[0]
    client.force_login(staff, second_factor=False)

    # As people type it: in capitals, in two groups.
    used = client.post("/en" + VERIFY + "?next=/admin/", {"code": f"{code[:4]} {code[4:]}".upper()})

    assert used.status_code == 302 and used["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    assert StaticToken.objects.filter(device__user=staff).count() == RECOVERY_CODE_COUNT - 1
    client.post("/en/accounts/logout/")
    client.force_login(staff, second_factor=False)
    again = client.post("/en" + VERIFY, {"code": code})
    assert again.status_code == 400 and "This code is not valid" in again.content.decode()
    assert VERIFY in client.get("/admin/")["Location"]


def test_otp_reset_removes_a_lost_device_and_logs_who_and_when(client, staff, caplog):
    authenticator_for(staff)
    recovery_codes_renew(user=staff)
    output = StringIO()

    with caplog.at_level(logging.WARNING, logger="accounts.two_factor"):
        call_command("otp_reset", staff.email.upper(), stdout=output)

    assert f"Removed the second factor of {staff.email}" in output.getvalue()
    assert "1 authenticator(s), 10 recovery code(s)" in output.getvalue()
    assert not two_factor_enabled(user=staff)
    assert not StaticToken.objects.filter(device__user=staff).exists()
    [record] = [r for r in caplog.records if "Second factor reset" in r.getMessage()]
    assert staff.email in record.getMessage() and " by " in record.getMessage()
    # Back to enrolment at the next admin page.
    client.force_login(staff, second_factor=False)
    assert ENROL in client.get("/admin/")["Location"]


def test_otp_reset_says_when_there_is_nothing_to_remove_or_nobody(customer):
    output = StringIO()
    call_command("otp_reset", customer.email, stdout=output)
    assert "had no second factor: nothing removed" in output.getvalue()
    with pytest.raises(CommandError, match="No account"):
        call_command("otp_reset", "nobody@example.com")


def test_a_customer_turns_it_on_and_each_login_then_asks_for_a_code(client, customer, password):
    client.force_login(customer)
    security = client.get("/en/account/security/").content.decode()
    assert "Off: your password alone opens your account." in security
    client.get("/en" + ENROL)
    pending = TOTPDevice.objects.get(user=customer, confirmed=False)
    codes_page = client.post("/en" + ENROL, {"password": password, "code": totp_code(pending)})
    assert len(recovery_codes_in(codes_page)) == RECOVERY_CODE_COUNT
    assert "On: after your password" in client.get("/en/account/security/").content.decode()
    client.post("/en/accounts/logout/")
    _api_key, raw_key = api_key_create(user=customer, name="Lab")

    logged_in = client.post("/en/accounts/login/", {"login": customer.email, "password": password})

    assert logged_in.status_code == 302
    for page in ("/en/account/", "/en/account/api-keys/", "/en/account/orders/", "/en/"):
        response = client.get(page)
        assert response.status_code == 302 and VERIFY in response["Location"], page
    # The session is no way into the API; an API key is unaffected.
    by_session = client.get("/api/v1/orders/")
    assert by_session.status_code == 403
    assert by_session.json()["error"]["code"] == "second_factor_required"
    by_key = client.get("/api/v1/orders/", HTTP_AUTHORIZATION=f"Api-Key {raw_key}")
    assert by_key.status_code == 200
    # Any other Authorization header is no API key: the session is still refused.
    for header in ("Bearer anything", "Basic eDp5", "Api-Key", "x"):
        disguised = client.get("/api/v1/orders/", HTTP_AUTHORIZATION=header)
        assert disguised.status_code in (401, 403), header
    assert client.get("/en/accounts/logout/").status_code == 200

    verify_url = client.get("/en/account/api-keys/")["Location"]
    verified = client.post(verify_url, {"code": totp_code(pending)})
    assert verified["Location"] == "/en/account/api-keys/"
    assert client.get("/en/account/api-keys/").status_code == 200


def test_a_customer_turns_it_off_with_a_current_code(client, customer):
    device = authenticator_for(customer)
    client.force_login(customer)

    refused = client.post("/en/account/security/", {"action": "disable", "code": "000000"})
    assert refused.status_code == 400 and two_factor_enabled(user=customer)
    device.throttle_reset()
    turned_off = client.post(
        "/en/account/security/", {"action": "disable", "code": totp_code(device)}
    )

    assert turned_off.status_code == 302
    assert not two_factor_enabled(user=customer)
    assert client.get("/en/account/").status_code == 200


def test_staff_keep_their_second_factor(client, staff):
    device = authenticator_for(staff)
    client.force_login(staff)
    response = client.post(
        "/en/account/security/", {"action": "disable", "code": totp_code(device)}, follow=True
    )
    assert "Staff accounts keep their second factor." in response.content.decode()
    assert two_factor_enabled(user=staff)


def test_new_recovery_codes_replace_the_old_ones(client, customer):
    device = authenticator_for(customer)
    old = recovery_codes_renew(user=customer)
    client.force_login(customer)

    renewed = client.post(
        "/en/account/security/", {"action": "new-codes", "code": totp_code(device)}
    )

    new = recovery_codes_in(renewed)
    assert len(new) == RECOVERY_CODE_COUNT and not set(new) & set(old)
    stored = StaticToken.objects.filter(device__user=customer).values_list("token", flat=True)
    assert set(stored) == set(new)


@pytest.mark.parametrize(
    "data",
    [{}, {"action": "disable"}, {"action": "explode", "code": "123456"}, {"code": "x" * 500}],
)
def test_bad_security_forms_get_a_clear_answer(client, customer, data):
    authenticator_for(customer)
    client.force_login(customer)
    response = client.post("/en/account/security/", data)
    assert response.status_code == 400


def test_the_admin_site_itself_refuses_staff_without_a_verified_second_factor(rf, staff):
    # Behind the middleware's redirects, for any admin view it would not see.
    request = rf.get("/admin/")
    request.user = staff
    staff.is_verified = lambda: False
    assert not admin.site.has_permission(request)
    staff.is_verified = lambda: True
    assert admin.site.has_permission(request)


def test_the_admin_never_shows_an_authenticator_key_nor_a_recovery_code(client, staff):
    colleague = UserFactory(is_staff=True)
    device = authenticator_for(colleague)
    code = recovery_codes_renew(user=colleague)[0]
    client.force_login(staff)
    recovery = StaticDevice.objects.get(user=colleague)
    pages = [
        f"/admin/accounts/authenticatorapp/{device.pk}/change/",
        f"/admin/accounts/recoverycodes/{recovery.pk}/change/",
    ]
    for url in pages:
        page = client.get(url)
        assert page.status_code == 200, url
        body = page.content.decode()
        assert device.key not in body and code not in body, url


def test_the_french_admin_names_second_factors_and_payment_requests_in_french(client, staff):
    client.force_login(staff)
    home = client.get("/admin/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    for name in ("Applications d\u2019authentification", "Codes de secours"):
        assert name in home, name
    # Not django-otp's English sections.
    assert "OTP_" not in home and "devices" not in home
    # The crypto payment requests are not "Factures" beside the real ones (billing).
    assert 'href="/admin/payments/invoice/">Demandes de paiement<' in home
    assert 'href="/admin/billing/billingdocument/">Factures et avoirs<' in home


def test_you_are_logged_in_is_said_after_the_code_not_before(client, customer, password):
    device = authenticator_for(customer)
    welcome = f"Hello {customer.first_name}, you are logged in."

    asked = client.post(
        "/en/accounts/login/", {"login": customer.email, "password": password}, follow=True
    )
    assert VERIFY in asked.redirect_chain[-1][0]
    assert welcome not in asked.content.decode()

    verified = client.post("/en" + VERIFY, {"code": totp_code(device)}, follow=True)
    assert welcome in verified.content.decode()


def test_turning_it_on_needs_the_password_and_tries_count_towards_the_limit(
    client, customer, password, settings
):
    """A session left open somewhere is not enough to tie the account to someone else's
    phone; guessing the password there is limited as codes are."""
    settings.TWO_FACTOR_RATE_LIMIT = {"limit": 3, "period": 300}
    client.force_login(customer)
    client.get("/en" + ENROL)
    pending = TOTPDevice.objects.get(user=customer, confirmed=False)
    statuses = []
    for guess in ("123456", "password", "hunter22"):
        refused = client.post("/en" + ENROL, {"password": guess, "code": totp_code(pending)})
        statuses.append(refused.status_code)
        assert "This is not your password." in refused.content.decode()
    assert statuses == [400, 400, 400]
    limited = client.post("/en" + ENROL, {"password": password, "code": totp_code(pending)})
    assert limited.status_code == 429
    assert not two_factor_enabled(user=customer)


def test_the_owner_is_told_by_email_when_it_goes_on_and_off_in_their_language(
    client, customer, password, worker_runs, mailoutbox
):
    customer.language = "fr"
    customer.save(update_fields=["language"])
    client.force_login(customer)
    client.get("/en" + ENROL)
    pending = TOTPDevice.objects.get(user=customer, confirmed=False)
    with worker_runs():
        client.post("/en" + ENROL, {"password": password, "code": totp_code(pending)})
    with worker_runs():
        client.post(
            "/en/account/security/",
            {"action": "disable", "code": totp_code(authenticator_for(customer))},
        )
    assert [message.subject for message in mailoutbox] == [
        "[LocaGPU] La double authentification est activée",
        "[LocaGPU] La double authentification est désactivée",
    ]
    assert all(message.to == [customer.email] for message in mailoutbox)
    assert "Si ce n'est pas vous" in mailoutbox[0].body
