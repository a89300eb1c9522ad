"""What one web process changes, another refuses at its very next request: revocation, a new
password, deactivation, logout. The other process is a real one (forked, its own database
connection and Redis connections), asked over a pipe: nothing it could have kept in its own
memory may answer for the database."""

import multiprocessing
from collections.abc import Iterator

import pytest
from django.contrib.auth import SESSION_KEY
from django.db import connections
from django.test import Client

from accounts.services import account_password_changed, api_key_create, api_key_revoke
from tests.accounts.helpers import account_deactivated_by_staff
from tests.payments.helpers import order_with_invoice

pytestmark = pytest.mark.django_db(transaction=True)

API_URL = "/api/v1/orders/{number}/"
PAGE_URL = "/en/account/orders/{number}/"


def _serve(requests) -> None:
    """The other web process: answers (path, headers, cookies) with the status code."""
    for connection in connections.all(initialized_only=True):
        connection.connection = None  # the parent's socket stays the parent's: a new one
    while True:
        asked = requests.recv()
        if asked is None:
            return
        path, headers, cookies = asked
        client = Client(headers=headers)
        for name, value in cookies.items():
            client.cookies[name] = value
        requests.send(client.get(path).status_code)


class OtherProcess:
    def __init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()

    def get(self, path: str, *, headers: dict | None = None, cookies: dict | None = None) -> int:
        self._pipe.send((path, headers or {}, cookies or {}))
        if not self._pipe.poll(60):
            raise TimeoutError(path)
        return self._pipe.recv()

    def stop(self) -> None:
        self._pipe.send(None)
        self._process.join(10)


@pytest.fixture
def other_process() -> Iterator[OtherProcess]:
    process = OtherProcess()
    yield process
    process.stop()


@pytest.fixture
def order(customer, usdc):
    return order_with_invoice(usdc, user=customer).order


def _key_headers(user) -> dict:
    return {"Authorization": f"Api-Key {api_key_create(user=user, name='k')[1]}"}


def _both_answer(other_process, client, path: str, **asked) -> list[int]:
    """This process and the other one, each asking twice."""
    here = [client.get(path).status_code for _ in range(2)]
    there = [other_process.get(path, **asked) for _ in range(2)]
    return here + there


def test_a_revoked_key_is_refused_by_the_other_process_at_its_next_request(
    other_process, customer, order
):
    path, headers = API_URL.format(number=order.number), _key_headers(customer)
    assert _both_answer(other_process, Client(headers=headers), path, headers=headers) == [200] * 4
    api_key_revoke(api_key=customer.api_keys.get())
    assert other_process.get(path, headers=headers) == 401


def test_a_new_password_is_refused_by_the_other_process_at_its_next_request(
    other_process, customer, order
):
    path, headers = API_URL.format(number=order.number), _key_headers(customer)
    assert _both_answer(other_process, Client(headers=headers), path, headers=headers) == [200] * 4
    customer.set_password("another long passphrase")
    customer.save()
    account_password_changed(user=customer)
    assert other_process.get(path, headers=headers) == 401


def test_a_deactivated_account_is_refused_by_the_other_process_at_its_next_request(
    other_process, admin_client, customer, order
):
    path, headers = API_URL.format(number=order.number), _key_headers(customer)
    assert _both_answer(other_process, Client(headers=headers), path, headers=headers) == [200] * 4
    account_deactivated_by_staff(admin_client, customer)
    assert other_process.get(path, headers=headers) == 401


def test_a_session_logged_out_here_is_refused_by_the_other_process_at_its_next_request(
    other_process, client, customer, order
):
    path, cookies = _signed_in_both(other_process, client, customer, order)
    assert client.session[SESSION_KEY] == str(customer.pk)
    client.post("/en/accounts/logout/")
    assert other_process.get(path, cookies=cookies) == 302  # to the login page


def _signed_in_both(other_process, client, customer, order) -> tuple[str, dict]:
    """The customer signed in, its order page answered twice on each process."""
    client.force_login(customer)
    cookies = {name: morsel.value for name, morsel in client.cookies.items()}
    path = PAGE_URL.format(number=order.number)
    assert _both_answer(other_process, client, path, cookies=cookies) == [200] * 4
    return path, cookies


def test_a_session_is_ended_on_the_other_process_by_a_new_password(
    other_process, client, customer, order
):
    path, cookies = _signed_in_both(other_process, client, customer, order)
    customer.set_password("another long passphrase")
    customer.save()
    assert other_process.get(path, cookies=cookies) == 302  # to the login page


def test_a_session_is_ended_on_the_other_process_by_a_deactivation(
    other_process, admin_client, client, customer, order
):
    path, cookies = _signed_in_both(other_process, client, customer, order)
    account_deactivated_by_staff(admin_client, customer)
    assert other_process.get(path, cookies=cookies) == 302
