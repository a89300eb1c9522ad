"""Network presets: loaded idempotently, activated only when the node and tokens match."""

from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.forms.models import model_to_dict

from payments.devnet import token_deploy
from payments.models import Asset, Chain, PriceFeed
from payments.networks import ActivationRefused, chain_activate, network_preset_load
from payments.presets import PRESETS
from tests.anvil import anvil_start, anvil_stop

pytestmark = [pytest.mark.chain]
BASE = PRESETS["base"]
BASE_USDC = BASE.tokens[0].address


@pytest.fixture(scope="module")
def base_node():
    """An anvil answering chain id 8453, with a USDC-like token's code at Base's USDC address
    (the real contract cannot exist on a fresh chain)."""
    node = anvil_start(chain_id=8453)
    try:
        deployed = token_deploy(node.w3)
        node.rpc("anvil_setCode", [BASE_USDC, node.rpc("eth_getCode", [deployed, "latest"])])
        yield node
    finally:
        anvil_stop(node)


@pytest.fixture
def no_rpc_urls(monkeypatch):
    for preset in PRESETS.values():
        monkeypatch.delenv(preset.rpc_url_env, raising=False)


def snapshot() -> list:
    return [
        [model_to_dict(row) for row in model.objects.order_by("pk")]
        for model in (Chain, PriceFeed, Asset)
    ]


def load(*names) -> str:
    out = StringIO()
    call_command("load_networks", *names, stdout=out)
    return out.getvalue()


def test_presets_load_twice_without_change(db, no_rpc_urls):
    output = load()
    first = snapshot()
    assert load() and snapshot() == first
    chains = {chain.chain_id: chain for chain in Chain.objects.all()}
    assert set(chains) == {1, 8453, 42161, 137}
    assert not any(chain.is_active for chain in chains.values())
    assert "ethereum: loaded, inactive: Ethereum: set ETHEREUM_RPC_URL to activate it." in output
    assert (chains[1].finality_tag, chains[8453].finality_tag) == ("finalized", "safe")
    usdc = Asset.objects.get(slug="usdc-base")
    assert (usdc.contract_address, usdc.decimals, usdc.price_feed.pair) == (
        BASE_USDC,
        6,
        "USDC/USD",
    )
    assert usdc.is_stablecoin and not Asset.objects.get(slug="eth-base").is_stablecoin
    assert PriceFeed.objects.get(chain=chains[8453], role="sequencer")


def test_an_unknown_network_name_is_refused_and_nothing_loaded(db):
    with pytest.raises(CommandError, match="Unknown network"):
        load("base", "solana")
    assert not Chain.objects.exists()


def test_base_activates_when_its_node_answers_8453_and_its_token_matches(
    db, base_node, no_rpc_urls, monkeypatch
):
    monkeypatch.setenv("BASE_RPC_URL", base_node.url)
    assert "base: loaded and active" in load("base")
    assert Chain.objects.get(chain_id=8453).is_active
    # Staff choices survive a reload: the chain stays active, an asset stays withdrawn.
    Asset.objects.filter(slug="eth-base").update(is_active=False)
    load("base")
    assert Chain.objects.get(chain_id=8453).is_active
    assert not Asset.objects.get(slug="eth-base").is_active


def test_activation_refuses_a_node_of_another_chain(db, anvil, no_rpc_urls, monkeypatch):
    monkeypatch.setenv("BASE_RPC_URL", anvil.url)  # the devnet: chain 31337
    output = load("base")
    assert "the node at $BASE_RPC_URL is chain 31337, not 8453." in output
    assert not Chain.objects.get(chain_id=8453).is_active


def test_activation_refuses_a_token_whose_decimals_differ(db, base_node, monkeypatch):
    monkeypatch.setenv("BASE_RPC_URL", base_node.url)
    chain = network_preset_load(preset=BASE)
    chain_activate(chain=chain)
    wrong = replace(BASE, tokens=[replace(BASE.tokens[0], decimals=18)])
    chain = network_preset_load(preset=wrong)
    with pytest.raises(ActivationRefused) as refused:
        chain_activate(chain=chain)
    assert str(refused.value) == (
        f"Base: the token at {BASE_USDC} is USDC with 6 decimals on chain, not USDC with 18."
    )
    assert not Chain.objects.get(chain_id=8453).is_active


def test_activation_refuses_a_token_whose_symbol_differs(db, base_node, monkeypatch):
    monkeypatch.setenv("BASE_RPC_URL", base_node.url)
    wrong = replace(BASE, tokens=[replace(BASE.tokens[0], symbol="USDT")])
    with pytest.raises(ActivationRefused, match="is USDC with 6 decimals on chain, not USDT"):
        chain_activate(chain=network_preset_load(preset=wrong))


def test_activation_refuses_a_node_that_does_not_answer(db, monkeypatch, settings):
    settings.PAYMENTS_RPC_BACKOFF_SECONDS = 0
    monkeypatch.setenv("BASE_RPC_URL", "http://127.0.0.1:9")
    with pytest.raises(ActivationRefused, match=r"could not check it on \$BASE_RPC_URL"):
        chain_activate(chain=network_preset_load(preset=BASE))
    assert not Chain.objects.get(chain_id=8453).is_active
