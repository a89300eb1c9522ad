"""Control characters never reach a document: the forms and the API refuse them in every field
a document (or its order) shows, and a document holding one anyway (issued before this rule)
still renders, with them stripped. Every C0 control is tried."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from billing.models import BillingDocument
from billing.rendering import document_pdf, document_xml
from rental.text import refuse_control_characters, refuse_control_characters_but_lines
from tests.billing.helpers import order_paid

User = get_user_model()
# Every C0 control (and DEL) but the line breaks a multi-line field holds.
C0 = [chr(code) for code in range(0x20)] + ["\x7f"]
IN_A_LINE = [char for char in C0 if char not in "\t\n\r"]


@pytest.mark.parametrize("char", C0, ids=lambda char: f"0x{ord(char):02x}")
def test_a_name_or_company_with_a_control_character_is_refused_clearly(client, customer, char):
    client.force_login(customer)
    response = client.post(
        "/en/account/",
        {
            "first_name": f"A{char}da",
            "last_name": "Lovelace",
            "language": "en",
            "company_name": f"Analytical{char} Engines",
            "billing_address": "1 rue de la Paix\n75002 Paris",
        },
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert {"first_name", "company_name"} <= set(errors)
    customer.refresh_from_db()
    assert customer.company_name == ""


@pytest.mark.parametrize("char", IN_A_LINE, ids=lambda char: f"0x{ord(char):02x}")
def test_an_address_with_a_control_character_is_refused_but_lines_are_kept(client, customer, char):
    client.force_login(customer)
    fields = {"first_name": "Ada", "last_name": "Lovelace", "language": "en"}
    refused = client.post("/en/account/", {**fields, "billing_address": f"1 rue{char} Paix"})
    assert "billing_address" in refused.context["form"].errors
    taken = client.post("/en/account/", {**fields, "billing_address": "1 rue\r\n\tParis"})
    assert taken.status_code == 302


def test_a_document_holding_every_control_character_still_renders(customer, usdc, worker_runs):
    # Written straight to the database, as details taken before the forms refused them were.
    every = "".join(C0[1:])  # all but NUL, which PostgreSQL text never holds
    User.objects.filter(pk=customer.pk).update(
        first_name=f"Ada{every}",
        company_name=f"Analytical{every}Engines",
        billing_address=f"1 rue{every}\nParis",
        vat_number="",
    )
    with worker_runs():
        order = order_paid(usdc, user=customer)
    invoice = BillingDocument.objects.get(order=order)
    assert "\x1b" in invoice.buyer["company_name"]  # the snapshot keeps what was given
    xml = document_xml(invoice).decode()
    assert "Analytical" in xml and "Engines</ram:Name>" in xml
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", xml)
    assert document_pdf(invoice).startswith(b"%PDF")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x07"], ids=["nul", "esc", "bel"])
def test_the_api_refuses_environment_details_with_a_control_character(api, gpu, pytorch, char):
    body = {
        "gpu": gpu.slug,
        "environment": "pytorch",
        "quantity": 1,
        "term_days": 7,
        "environment_details": f"torch==2.4{char}",
    }
    response = api.post("/api/v1/orders/", body, format="json")
    assert response.status_code == 400
    assert "environment_details" in response.json()["error"]["fields"]


# What a document would show as nothing, a box, or text turned around (issue 32, finding 7):
# C1 controls, a bidi override, a zero-width space, a non-character.
INVISIBLE = ["\x9b", "\x85", "\u202e", "\u200b", "\ufffe"]


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda char: f"U+{ord(char):04X}")
def test_the_profile_refuses_invisible_characters_naming_the_field_and_character(
    client, customer, char
):
    client.force_login(customer)
    response = client.post(
        "/en/account/",
        {
            "first_name": "Ada",
            "last_name": f"Love{char}lace",
            "language": "en",
            "company_name": f"ACME{char} SA",
            "billing_address": f"1 rue de la Paix\n75002{char} Paris",
        },
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert set(errors) == {"last_name", "company_name", "billing_address"}
    assert f"U+{ord(char):04X}" in errors["company_name"][0]
    customer.refresh_from_db()
    assert customer.company_name == ""


@pytest.mark.parametrize("char", INVISIBLE, ids=lambda char: f"U+{ord(char):04X}")
def test_the_api_refuses_invisible_characters_naming_the_field(api, gpu, pytorch, char):
    body = {
        "gpu": gpu.slug,
        "environment": "pytorch",
        "quantity": 1,
        "term_days": 7,
        "environment_details": f"torch{char}==2.4",
    }
    response = api.post("/api/v1/orders/", body, format="json")
    assert response.status_code == 400
    [message] = response.json()["error"]["fields"]["environment_details"]
    assert f"U+{ord(char):04X}" in message


REFUSED = [
    *map(chr, range(0x80, 0xA0)),  # C1 controls
    *map(chr, range(0x202A, 0x202F)),  # bidi embeddings and overrides
    *map(chr, range(0x2066, 0x206A)),  # bidi isolates
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero width
    *map(chr, range(0xFDD0, 0xFDF0)),  # non-characters
    *(chr(plane << 16 | low) for plane in range(17) for low in (0xFFFE, 0xFFFF)),
]  # fmt: skip


@pytest.mark.parametrize(
    "validator", [refuse_control_characters, refuse_control_characters_but_lines]
)
def test_every_invisible_character_is_refused_and_ordinary_text_is_not(validator):
    for char in REFUSED:
        with pytest.raises(ValidationError):
            validator(f"ACME{char}SA")
    validator("Société Générale — Zürich 東京 \u05e9\u05dc\u05d5\u05dd 🙂")
