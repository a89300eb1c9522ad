"""Past an account's login ceiling the owner still gets in, with the password and the code
e-mailed to them (or their second factor); a guesser gets no password checked, and the known
browser's cookie neither outlives the password nor lets its holder guess on."""

import re

import pytest
from allauth.account.adapter import get_adapter
from django.test import Client

from accounts.login_limits import KNOWN_DEVICE
from tests.accounts.test_login_limits import refused_for_too_many_failures
from tests.accounts.two_factor import authenticator_for, totp_code

pytestmark = pytest.mark.django_db

CODE = re.compile(r"^([A-Z2-9]{5}-[A-Z2-9]{5})$", re.MULTILINE)


def _login(client, email: str, password: str, address: str = "192.0.2.10", **extra):
    return client.post(
        "/en/accounts/login/", {"login": email, "password": password, **extra}, REMOTE_ADDR=address
    )


def _reach_the_ceiling(email: str, settings) -> None:
    guesser = Client()
    for n in range(settings.ACCOUNT_LOGIN_CEILING["limit"]):
        _login(guesser, email, f"guess{n}", address=f"198.51.100.{n // 5 + 1}")


def _code_mailed_to(mailoutbox, email: str) -> str:
    (mail,) = [mail for mail in mailoutbox if mail.to == [email]]
    return CODE.search(mail.body).group(1)


def test_the_owner_gets_in_past_the_ceiling_with_the_password_and_the_mailed_code(
    customer, password, settings, mailoutbox, worker_runs
):
    _reach_the_ceiling(customer.email, settings)
    owner = Client()
    with worker_runs():
        asked = _login(owner, customer.email, password)
    assert refused_for_too_many_failures(asked)
    assert 'name="login_code"' in asked.content.decode()
    code = _code_mailed_to(mailoutbox, customer.email)

    welcomed = _login(owner, customer.email, password, login_code=code.lower())
    assert welcomed.status_code == 302
    assert owner.session["_auth_user_id"] == str(customer.pk)


def test_past_the_ceiling_no_password_is_checked_without_the_code(
    customer, password, settings, mailoutbox, worker_runs
):
    _reach_the_ceiling(customer.email, settings)
    guesser = Client()
    with worker_runs():
        refused = [
            _login(guesser, customer.email, password),
            _login(guesser, customer.email, password, login_code="AAAAA-AAAAA"),
        ]
    assert all(refused_for_too_many_failures(response) for response in refused)
    assert "_auth_user_id" not in guesser.session
    # The owner's mailbox got one code, not one per attempt.
    assert len(mailoutbox) == 1


def test_staff_get_in_past_the_ceiling_with_the_password_and_their_second_factor(
    staff, password, settings
):
    device = authenticator_for(staff)
    _reach_the_ceiling(staff.email, settings)
    owner = Client()
    welcomed = _login(owner, staff.email, password, login_code=totp_code(device))
    assert welcomed.status_code == 302
    # The code typed with the password is the second step: the admin opens.
    assert owner.get("/admin/").status_code == 200


def _known_browser(email: str, password: str) -> Client:
    browser = Client()
    assert _login(browser, email, password).status_code == 302
    known = browser.cookies[KNOWN_DEVICE].value
    browser = Client()
    browser.cookies[KNOWN_DEVICE] = known
    return browser


def test_a_password_change_voids_the_known_browser_cookie(
    customer, password, settings, worker_runs
):
    browser = _known_browser(customer.email, password)
    with worker_runs():
        get_adapter().set_password(customer, "a new long password 42")
    _reach_the_ceiling(customer.email, settings)
    # Whoever kept the cookie of the old password is a stranger now, even with the new one.
    with worker_runs():
        refused = _login(browser, customer.email, "a new long password 42")
    assert refused_for_too_many_failures(refused)
    assert "_auth_user_id" not in browser.session


def test_a_known_browser_never_guesses_past_the_ceiling(customer, password, settings, worker_runs):
    browser = _known_browser(customer.email, password)
    _reach_the_ceiling(customer.email, settings)
    with worker_runs():
        wrong = _login(browser, customer.email, "guess again")
        # After a failure of its own, not even the right password is checked without a code.
        right = _login(browser, customer.email, password)
    assert not refused_for_too_many_failures(wrong)  # its one guess, evaluated and wrong
    assert refused_for_too_many_failures(right)
    assert "_auth_user_id" not in browser.session
