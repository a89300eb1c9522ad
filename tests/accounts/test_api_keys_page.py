"""The API keys page's creation form, sent back with its errors."""

import pytest


@pytest.mark.django_db
def test_a_form_sent_back_with_its_errors_is_drawn_by_django(client, customer):
    client.force_login(customer)
    page = client.post("/fr/account/api-keys/", {"action": "create", "name": "", "scope": "x"})
    assert page.status_code == 400
    assert 'aria-describedby="id_name_error"' in page.content.decode()
