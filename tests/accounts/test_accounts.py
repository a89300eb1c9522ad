import re

import pytest
from django.core import mail

from accounts.models import User
from tests.accounts.helpers import code_in, last_mail_to, reset_link_in

pytestmark = pytest.mark.django_db

STRONG = "correct-Horse-battery-9"


def _signup(client, lang="fr", **overrides):
    data = {
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": "ada@example.com",
        "password1": STRONG,
        "password2": STRONG,
    }
    data.update(overrides)
    return client.post(f"/{lang}/accounts/signup/", data)


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_a_visitor_signs_up_with_names_email_and_password_then_the_code(client, lang, worker_runs):
    with worker_runs():
        response = _signup(client, lang)
    assert response.status_code == 302
    user = User.objects.get(email="ada@example.com")
    assert (user.first_name, user.last_name, user.language) == ("Ada", "Lovelace", lang)
    # Not in before the code from the mailbox.
    code_page = client.get(response["Location"])
    assert code_page.status_code == 200 and 'name="code"' in code_page.content.decode()
    assert client.get(f"/{lang}/account/").status_code == 302

    message = last_mail_to("ada@example.com")
    assert message.subject.startswith("[LocaGPU] ")
    wrong = client.post(response["Location"], {"code": "AAAAAA"})
    assert wrong.status_code == 200 and "_auth_user_id" not in client.session
    entered = client.post(response["Location"], {"code": code_in(message)})
    assert entered.status_code == 302
    assert client.get(f"/{lang}/account/").status_code == 200


@pytest.mark.parametrize(
    ("lang", "subject", "words"),
    [
        ("fr", "[LocaGPU] Confirmez votre adresse e-mail", "le code qui confirme l\u2019adresse"),
        ("en", "[LocaGPU] Confirm your e-mail address", "the code that confirms"),
    ],
)
def test_the_signup_mail_calls_its_code_a_confirmation_code(
    client, lang, subject, words, worker_runs
):
    with worker_runs():
        _signup(client, lang)
    message = last_mail_to("ada@example.com")
    assert message.subject == subject
    assert f"{words} ada@example.com" in message.body
    # Not allauth's "login code" given by "user ada@example.com" (the reader themself).
    assert "connexion" not in message.body and "user ada" not in message.body


@pytest.mark.parametrize(
    ("lang", "words"),
    [("fr", ["Confirmez votre adresse e-mail", "Code"]), ("en", ["Confirm your e-mail", "Code"])],
)
def test_the_code_page_speaks_the_visitors_language(client, lang, words):
    response = _signup(client, lang)
    page = client.get(response["Location"]).content.decode()
    assert all(word in page for word in words), page


def test_the_signup_form_asks_for_no_identity_document(client):
    page = client.get("/fr/accounts/signup/").content.decode()
    inputs = set(re.findall(r'<(?:input|select|textarea)[^>]*name="([^"]+)"', page))
    assert inputs == {
        "csrfmiddlewaretoken",
        "first_name",
        "last_name",
        "email",
        "password1",
        "password2",
        "time_zone",  # hidden, filled with the browser's zone
    }
    names = {f.name for f in User._meta.get_fields()}
    assert not {"id_document", "passport", "identity_document"} & names


def test_the_french_signup_page_is_in_french(client):
    page = client.get("/fr/accounts/signup/").content.decode()
    assert "Prénom" in page and "Nom" in page and "Mot de passe" in page
    assert "First name" not in page and "Password" not in page


def test_logout_then_login_again(client, customer, password):
    client.force_login(customer)
    assert client.post("/fr/accounts/logout/").status_code == 302
    assert client.get("/fr/account/").status_code == 302
    response = client.post("/en/accounts/login/", {"login": customer.email, "password": password})
    assert response.status_code == 302
    assert client.get("/en/account/").status_code == 200


def test_wrong_password_is_refused_with_a_message(client, customer):
    response = client.post("/fr/accounts/login/", {"login": customer.email, "password": "nope"})
    assert response.status_code == 200
    assert "incorrect" in response.content.decode()


def test_failed_logins_on_one_address_are_limited_even_for_the_right_password(
    client, customer, password
):
    for _ in range(5):
        client.post("/en/accounts/login/", {"login": customer.email, "password": "nope"})
    response = client.post("/en/accounts/login/", {"login": customer.email, "password": password})
    assert response.status_code == 200
    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_password_change(client, customer, password, lang):
    client.force_login(customer)
    new = "another-Strong-pass-42"
    response = client.post(
        f"/{lang}/accounts/password/change/",
        {"oldpassword": password, "password1": new, "password2": new},
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert customer.check_password(new)


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_password_reset_by_email_link(client, customer, lang, worker_runs):
    with worker_runs():
        client.post(f"/{lang}/accounts/password/reset/", {"email": customer.email})
    assert len(mail.outbox) == 1
    form_url = client.get(reset_link_in(mail.outbox[0]))["Location"]
    new = "reset-Strong-pass-77"
    response = client.post(form_url, {"password1": new, "password2": new})
    assert response.status_code == 302
    customer.refresh_from_db()
    assert customer.check_password(new)


def test_reset_email_is_in_french_and_signed_by_the_store(client, customer, worker_runs):
    with worker_runs():
        client.post("/fr/accounts/password/reset/", {"email": customer.email})
    message = mail.outbox[0]
    assert "mot de passe" in (message.subject + message.body).lower()
    assert message.subject.startswith("[LocaGPU] ")
    assert "LocaGPU" in message.body
    assert message.from_email == "LocaGPU <noreply@locagpu.test>"


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"first_name": ""}, "first_name", "obligatoire"),
        ({"last_name": "   "}, "last_name", "obligatoire"),
        ({"first_name": "A" * 300}, "first_name", "150"),
        ({"last_name": "B" * 300}, "last_name", "150"),
        ({"password1": "password", "password2": "password"}, "password1", "trop courant"),
        ({"password1": "12345678901", "password2": "12345678901"}, "password1", "numérique"),
        ({"password2": "something-else-42"}, "password2", "même mot de passe"),
        ({"email": "not-an-email"}, "email", "valide"),
    ],
)
def test_bad_signup_input_is_explained_and_nothing_is_stored(client, overrides, field, message):
    response = _signup(client, **overrides)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert field in errors, errors
    assert message in " ".join(errors[field]), errors[field]
    assert not User.objects.exists()


def test_a_duplicate_email_makes_no_second_account_and_its_owner_is_told(
    client, customer, worker_runs
):
    with worker_runs():
        _signup(client, email=customer.email.upper())
    assert User.objects.count() == 1
    assert "compte" in last_mail_to(customer.email).body.lower()


def test_profile_page_edits_names_and_language(client, customer):
    client.force_login(customer)
    response = client.post(
        "/fr/account/", {"first_name": "Grace", "last_name": "Hopper", "language": "en"}
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert (customer.first_name, customer.last_name, customer.language) == ("Grace", "Hopper", "en")


def test_profile_rejects_empty_and_overlong_names(client, customer):
    client.force_login(customer)
    response = client.post(
        "/fr/account/", {"first_name": "", "last_name": "x" * 300, "language": "fr"}
    )
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"first_name", "last_name"}
    customer.refresh_from_db()
    assert customer.first_name


def test_profile_requires_login(client):
    response = client.get("/fr/account/")
    assert response.status_code == 302
    assert response["Location"].startswith("/fr/accounts/login/")
